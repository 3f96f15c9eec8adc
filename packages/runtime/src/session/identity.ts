import { BUNDLE_ERROR_CODES, checkSelection, type Bundle } from "@openworker/bundle-resolver";
import { computeExecutionIdentity, type ExecutionIdentity, type SelectedTool } from "@openworker/journal";
import type { ToolRegistry } from "@openworker/registry";
import { modelAlias, OpenWorkerError, type JsonValue, type ToolDescriptor } from "@openworker/tools-sdk";
import { schemaFingerprint } from "@openworker/tools-sdk/internal/validation";
import { RUNTIME_ERROR_CODES } from "../errors.js";

/** What a session's identity was computed from, in auditor-readable form. */
export interface SessionIdentity {
  readonly identity: ExecutionIdentity;
  /** Journaled with `sessionOpened`: digests and names, never secrets. */
  readonly inputs: JsonValue;
}

/**
 * Computes a session's execution identity (A2) from the bundle, the policy, the
 * registry selection as far as it is known before discovery, the selected native
 * descriptors and the host. MCP tools enter by name and provider; their schemas are
 * discovered per turn and bind approvals through the schema fingerprint (M3). A selected
 * name whose namespace nobody owns fails here, before any model sees anything (N7).
 */
export function sessionIdentity(
  registry: ToolRegistry,
  bundle: Bundle,
  policies: JsonValue,
  host: { executableBytesDigest: string; nodeVersion: string },
): SessionIdentity {
  const selection: SelectedTool[] = [];
  const nativeDescriptors: ToolDescriptor[] = [];
  const pick = bundle.selection;
  if (pick.version === 3) {
    for (const name of pick.tools) {
      const native = registry.get(name);
      if (native) {
        selection.push({
          qualifiedName: name,
          alias: native.alias,
          kind: "native",
          schemaFingerprint: schemaFingerprint(native.descriptor.inputSchema),
          version: native.descriptor.version,
        });
        nativeDescriptors.push(native.descriptor);
        continue;
      }
      const dot = name.indexOf(".");
      const namespace = name.slice(0, dot);
      if (registry.namespaceOwner(namespace) !== "mcp") throw notFound(bundle, name, namespace, registry);
      selection.push({
        qualifiedName: name,
        alias: modelAlias(name),
        kind: "mcp",
        schemaFingerprint: "discovered-per-turn",
        provider: namespace,
        remoteName: name.slice(dot + 1),
        ...launchOf(registry, namespace),
      });
    }
  } else {
    const servers = pick.version === 2 ? Object.entries(pick.mcpServers) : pick.mcpServers.map((server) => [server, ["*"]] as const);
    for (const [server, tools] of servers) {
      if (!registry.provider(server)) throw notFound(bundle, `${server}.${tools[0] ?? "*"}`, server, registry);
      for (const tool of tools) {
        const qualifiedName = `${server}.${tool}`;
        selection.push({
          qualifiedName,
          alias: modelAlias(qualifiedName),
          kind: "mcp",
          schemaFingerprint: "discovered-per-turn",
          provider: server,
          remoteName: tool,
          ...launchOf(registry, server),
        });
      }
    }
  }
  const identity = computeExecutionIdentity({
    bundle: { manifestBytes: bundle.manifestBytes, toolsJsonBytes: bundle.toolsJsonBytes, version: pick.version },
    policies,
    selection,
    nativeDescriptors,
    host,
  });
  const sandboxed = Object.fromEntries(selection.flatMap((tool) => (tool.launch === undefined ? [] : [[tool.provider!, tool.launch]])));
  return {
    identity,
    inputs: {
      scheme: identity.scheme,
      components: { ...identity.components },
      bundleVersion: pick.version,
      selection: selection.map((tool) => tool.qualifiedName),
      nodeVersion: host.nodeVersion,
      ...(Object.keys(sandboxed).length === 0 ? {} : { sandboxedProviders: sandboxed }),
    },
  };
}

/**
 * A4/A2: a sandbox-placed provider's placement and policy enter its tools' identity, so a
 * changed policy is a new identity that earlier approvals do not cover. Host-placed
 * providers add nothing (their identities stay as frozen).
 */
function launchOf(registry: ToolRegistry, namespace: string): { launch?: JsonValue } {
  const provider = registry.provider(namespace);
  if (provider?.transport !== "stdio" || provider.placement !== "sandbox") return {};
  const { read, write, network } = provider.sandbox ?? {};
  return {
    launch: {
      placement: "sandbox",
      sandbox: {
        ...(read === undefined ? {} : { read: [...read] }),
        ...(write === undefined ? {} : { write: [...write] }),
        ...(network === undefined ? {} : { network: network === "none" ? "none" : { allow: [...network.allow] } }),
      },
    },
  };
}

/**
 * A selected name nobody owns, reported as `tools check` and turn preparation report it
 * (one check, one set of codes, the same field: `tools[2]`, `mcpServers.x`):
 * `TOOL_NOT_REGISTERED` naming what the namespace has, `NAMESPACE_UNKNOWN` naming the
 * registered namespaces, or `SELECTION_NOT_MCP` for a v1/v2 bundle naming a native
 * namespace; prefixed with the bundle's folder.
 */
function notFound(bundle: Bundle, name: string, namespace: string, registry: ToolRegistry): OpenWorkerError {
  // The whole selection is checked, so the problem names the field where the name stands.
  const problem = checkSelection(registry, bundle.selection, []).find(
    (candidate) => OWNER_CODES.has(candidate.code) && candidate.details.namespace === namespace,
  );
  if (problem === undefined) {
    return new OpenWorkerError(RUNTIME_ERROR_CODES.TOOL_NOT_FOUND, `bundle ${bundle.dir}: tool ${JSON.stringify(name)} is not registered`, {
      details: { tool: name, namespace },
    });
  }
  return new OpenWorkerError(problem.code, `bundle ${bundle.dir}: ${problem.message}`, {
    details: { ...problem.details, tool: name, namespace, bundleDir: bundle.dir },
  });
}

/** The resolver's codes for a selected name no registered tool or provider owns. */
const OWNER_CODES: ReadonlySet<string> = new Set([
  BUNDLE_ERROR_CODES.toolNotRegistered,
  BUNDLE_ERROR_CODES.namespaceUnknown,
  BUNDLE_ERROR_CODES.notMcpNamespace,
]);
