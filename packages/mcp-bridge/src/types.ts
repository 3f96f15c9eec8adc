import type { JsonSchema, JsonValue, ProgressEvent } from "@openworker/tools-sdk";
import type { ExecutionResult } from "@openworker/tools-sdk/execution";

/**
 * One tool as its provider publishes it, with the fingerprint approvals bind to (M3):
 * a hash of its name, description, input and output schema and annotations.
 */
export interface McpCatalogTool {
  /** The exact remote name (the part after the first dot of the qualified name). */
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly annotations?: JsonValue;
  /** `sha256:` + hex of the canonical JSON of name, description, schemas and annotations. */
  readonly fingerprint: string;
}

/**
 * One provider's catalog as a session discovered it (M2). Structurally assignable to
 * the bundle resolver's `McpCatalogInput`.
 */
export interface McpCatalog {
  readonly namespace: string;
  /** In the provider's order. */
  readonly tools: readonly McpCatalogTool[];
  /** `sha256:` over the namespace and every tool's name and fingerprint. */
  readonly fingerprint: string;
  /**
   * Remote names added or changed since this session's previous discovery of the
   * namespace, for hosts that show what changed. On a session's first discovery, every
   * tool. Approvals do not need it: the runtime binds each one to the tool's fingerprint
   * (M3), so a changed tool finds none.
   */
  readonly changedTools: readonly string[];
  /** Remote names published at the previous discovery and gone now. */
  readonly removedTools: readonly string[];
  /**
   * False when the catalog was listed again for this discovery; true when the provider
   * declared `tools.listChanged`, has sent no change notification since the last
   * listing, and the session reused that listing.
   */
  readonly fromCache: boolean;
}

/** A provider whose tools are unavailable this turn, and why. */
export interface UnavailableProvider {
  readonly namespace: string;
  /** One of {@link MCP_ERROR_CODES}. */
  readonly code: string;
  /** Names the provider and the problem; never carries configured secrets (E6). */
  readonly message: string;
}

/** A non-fatal observation about a provider (skipped stdout lines, …). */
export interface ProviderDiagnostic {
  readonly namespace: string;
  readonly message: string;
}

/** What one `discover()` found: catalogs of the providers that answered, and the others. */
export interface DiscoveryResult {
  readonly catalogs: readonly McpCatalog[];
  readonly unavailable: readonly UnavailableProvider[];
  readonly diagnostics: readonly ProviderDiagnostic[];
}

/** How to run one MCP call. */
export interface McpCallOptions {
  /** Cancels the call: `notifications/cancelled` goes to the server and the call settles at once. */
  readonly signal?: AbortSignal;
  /**
   * Time bound; defaults to and is capped at the provider's call bound: its definition's
   * `callTimeoutMs`, else 75 s (`LIMITS.callTimeoutMs`, M10).
   */
  readonly timeoutMs?: number;
  /** Receives each progress event the call's bounded reporter accepted (E2). */
  readonly onProgress?: (event: ProgressEvent) => void;
  /**
   * The fingerprint of the catalog entry the call was approved for (`McpCatalogTool.fingerprint`).
   * When the session's current catalog describes the tool otherwise (a discovery since
   * took a changed catalog), the call fails unsent with `MCP_TOOL_CHANGED` (M3): it never
   * runs a tool under another tool's approval.
   */
  readonly toolFingerprint?: string;
}

/**
 * The settled result of one MCP call: the native call boundary's `ExecutionResult`
 * itself, so the runtime journals both alike.
 */
export type McpCallResult = ExecutionResult;
