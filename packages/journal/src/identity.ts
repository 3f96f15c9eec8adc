import { hash } from "node:crypto";
import { canonicalJson, type JsonValue, type ToolDescriptor } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS, journalError } from "./errors.js";

/**
 * One selected tool as the registry resolved it (B4).
 * @example
 * ```ts
 * const tool: SelectedTool = { qualifiedName: "acer.battery", alias: "acer__battery", kind: "mcp", schemaFingerprint, provider: "acer", remoteName: "battery" };
 * ```
 */
export interface SelectedTool {
  readonly qualifiedName: string;
  readonly alias: string;
  readonly kind: "native" | "mcp";
  readonly schemaFingerprint: string;
  /** Native implementation version, or the MCP server's reported version. */
  readonly version?: string;
  /** The MCP provider's namespace. */
  readonly provider?: string;
  /** The MCP server's raw tool name. */
  readonly remoteName?: string;
  /** What a sandbox-placed provider starts under (A4), e.g. `{ placement: "sandbox", sandbox: { read: ["/srv"] } }`; absent otherwise. */
  readonly launch?: JsonValue;
}
/**
 * Everything a session's execution identity pins (A2).
 * @example
 * ```ts
 * const inputs: ExecutionIdentityInputs = { bundle: { manifestBytes, toolsJsonBytes, version: 3 }, policies, selection, nativeDescriptors, host };
 * ```
 */
export interface ExecutionIdentityInputs {
  readonly bundle: { readonly manifestBytes: Uint8Array; readonly toolsJsonBytes: Uint8Array; readonly version: 1 | 2 | 3 };
  readonly policies: JsonValue;
  readonly selection: readonly SelectedTool[];
  /** Descriptors of the SELECTED native tools only. */
  readonly nativeDescriptors: readonly ToolDescriptor[];
  /** From {@link hostExecutableDigest}. */
  readonly host: { readonly executableBytesDigest: string; readonly nodeVersion: string };
}
/**
 * A computed execution identity with the per-component digests it was made from.
 * @example
 * ```ts
 * const { identity, components } = computeExecutionIdentity(inputs); // "owid3:…"
 * ```
 */
export interface ExecutionIdentity {
  /** `owid3:<hex>` for v3 bundles, `owid-legacy1:<hex>` for v1/v2 bundles. */
  readonly identity: string;
  readonly scheme: "owid3" | "owid-legacy1";
  /** Version of the hashing scheme; a scheme never changes once released. */
  readonly version: number;
  /** `sha256:<hex>` digest of each input, for auditors and for explaining why two identities differ. */
  readonly components: Readonly<Record<string, string>>;
}
/**
 * The execution identity approvals are bound to (A2, M3). Two schemes, each frozen:
 *
 * `owid3` (v3 bundles) covers the manifest and tools.json bytes, policies, the whole selection (with a sandbox-placed
 * provider's launch), the selected native descriptors and the host; `owid-legacy1` (v1/v2 MCP-only bundles, B3) the
 * bundle bytes, policies, host and the MCP part of the selection only, so native tools never change a v1/v2 identity.
 * Lists are sorted by qualified name; JSON is canonical (sorted keys). Throws
 * `IDENTITY_INPUT_INVALID` when the native descriptors and the selection disagree.
 * @example
 * ```ts
 * const { identity } = computeExecutionIdentity({ bundle, policies, selection, nativeDescriptors, host });
 * journal.sessionOpened({ sessionId, executionIdentity: identity, identityInputs: {}, workspace });
 * ```
 */
export function computeExecutionIdentity(inputs: ExecutionIdentityInputs): ExecutionIdentity {
  const { bundle } = inputs;
  if (bundle.version !== 1 && bundle.version !== 2 && bundle.version !== 3)
    throw identityError(`bundle.version must be 1, 2 or 3, got ${JSON.stringify(bundle.version)}`);
  const base = {
    manifest: digestOf(bundle.manifestBytes),
    toolsJson: digestOf(bundle.toolsJsonBytes),
    policies: digest(inputs.policies),
    host: digest({ executableBytesDigest: inputs.host.executableBytesDigest, nodeVersion: inputs.host.nodeVersion }),
  };
  if (bundle.version !== 3) {
    const mcp = sortByName(inputs.selection.filter((tool) => tool.kind === "mcp").map(selectionEntry));
    const components = { ...base, bundleVersion: String(bundle.version), mcpSelection: digest(mcp) };
    return seal("owid-legacy1", 1, components);
  }
  const selection = sortByName(inputs.selection.map(selectionEntry));
  checkNatives(inputs.selection, inputs.nativeDescriptors);
  const natives = [...inputs.nativeDescriptors]
    .map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema, version: tool.version }))
    .sort((left, right) => compare(left.name, right.name));
  return seal("owid3", 3, { ...base, selection: digest(selection), nativeDescriptors: digest(natives) });
}
/**
 * The digest of a call's arguments: `sha256:` + hex SHA-256 of their canonical JSON. Once-only approvals are keyed by it;
 * @example
 * ```ts
 * argumentsDigest({ b: 1, a: 2 }) === argumentsDigest({ a: 2, b: 1 }); // true
 * ```
 */
export function argumentsDigest(args: JsonValue): string {
  return digest(args);
}

function seal(scheme: ExecutionIdentity["scheme"], version: number, components: Record<string, string>): ExecutionIdentity {
  const hex = hash("sha256", canonicalJson({ components, scheme, version }), "hex");
  return { identity: `${scheme}:${hex}`, scheme, version, components: Object.freeze(components) };
}

function selectionEntry(tool: SelectedTool) {
  return {
    qualifiedName: tool.qualifiedName,
    alias: tool.alias,
    kind: tool.kind,
    schemaFingerprint: tool.schemaFingerprint,
    version: tool.version,
    provider: tool.provider,
    remoteName: tool.remoteName,
    launch: tool.launch,
  };
}

function checkNatives(selection: readonly SelectedTool[], descriptors: readonly ToolDescriptor[]): void {
  const selected = new Set(selection.filter((tool) => tool.kind === "native").map((tool) => tool.qualifiedName));
  const described = new Set<string>();
  for (const descriptor of descriptors) {
    if (!selected.has(descriptor.name)) {
      throw identityError(`native descriptor "${descriptor.name}" is not a selected native tool; pass the descriptors of the selected natives only`);
    }
    if (described.has(descriptor.name)) throw identityError(`native descriptor "${descriptor.name}" is given twice`);
    described.add(descriptor.name);
  }
  for (const name of selected) {
    if (!described.has(name)) throw identityError(`selected native tool "${name}" has no descriptor in nativeDescriptors`);
  }
}

function sortByName<T extends { qualifiedName: string }>(items: T[]): T[] {
  return items.sort((left, right) => compare(left.qualifiedName, right.qualifiedName));
}

// Code-unit order, not locale order: the identity must not depend on the machine's locale.
function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function digest(value: unknown): string {
  return digestOf(canonicalJson(value));
}
/** `sha256:` + hex SHA-256 of bytes, or of a value's canonical JSON when the caller has that text already. */
export function digestOf(data: string | Uint8Array): string {
  return `sha256:${hash("sha256", data, "hex")}`;
}

function identityError(problem: string) {
  return journalError(JOURNAL_ERRORS.IDENTITY_INPUT_INVALID, `execution identity: ${problem}`);
}
