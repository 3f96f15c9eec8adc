import type { JsonObject, JsonSchema, JsonValue, ProgressEvent } from "@openworker/tools-sdk";
import type { ExecutionResult } from "@openworker/tools-sdk/internal/execution";
import type { McpElicitationOutcome, McpElicitor } from "./call/elicitation.js";

/** An icon a tool publishes for host UIs (MCP `Icon`). */
export interface McpToolIcon {
  /** An `https:` URL or a `data:image/…` URI. */
  readonly src: string;
  readonly mimeType?: string;
  /** Such as `"48x48"` or `"any"`. */
  readonly sizes?: readonly string[];
  readonly theme?: "light" | "dark";
}

/**
 * One tool as its provider publishes it, with the fingerprint approvals bind to (M3):
 * a hash of its name, description, input and output schema and annotations. The title,
 * icons, `_meta` and `execution` are display or call hints and stay out of it.
 */
export interface McpCatalogTool {
  /** The exact remote name (the part after the first dot of the qualified name). */
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  /** The tool's MCP annotations (`readOnlyHint`, `destructiveHint`, …), string values redacted (E6). */
  readonly annotations?: JsonValue;
  /** At most 8 icons with an `https:` or `data:image/` source of at most 16 KiB each; others are left out. */
  readonly icons?: readonly McpToolIcon[];
  /** The tool's `_meta`, string values redacted (E6); left out when its JSON is over 4 KiB. */
  readonly _meta?: JsonObject;
  /** How the tool may be called; a tool whose `taskSupport` is `"required"` is withheld (see {@link McpCatalog.withheldTools}). */
  readonly execution?: { readonly taskSupport?: "forbidden" | "optional" | "required" };
  /** `sha256:` + hex of the canonical JSON of name, description, schemas and annotations. */
  readonly fingerprint: string;
}

/** A tool the provider publishes that the session does not offer (neither selectable nor callable), and why. */
export interface McpWithheldTool {
  /** The exact remote name. */
  readonly name: string;
  /** Why, as a clause: `it requires running as an MCP task (execution.taskSupport "required"), which the bridge does not do`. */
  readonly reason: string;
}

/**
 * One provider's catalog as a session discovered it (M2). Structurally assignable to
 * the bundle resolver's `McpCatalogInput`.
 */
export interface McpCatalog {
  readonly namespace: string;
  /** The tools offered (what a bundle can select and a session call), in the provider's order. */
  readonly tools: readonly McpCatalogTool[];
  /**
   * Tools the provider publishes and the session does not offer: those that require MCP
   * tasks (M7, M10). Discovery names them in a diagnostic too.
   */
  readonly withheldTools: readonly McpWithheldTool[];
  /** `sha256:` over the namespace and every offered tool's name and fingerprint. */
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
  /** The MCP revision the provider's connection negotiated (M6): `2026-07-28`, `2025-11-25`, `2025-06-18`, … */
  readonly protocolVersion?: string;
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
  /**
   * Answers the provider's requests for user input during this call (MCP elicitation,
   * M9), when the bridge was made with `elicitation: true`. Without it every request is
   * declined; so is one that throws, answers something malformed, or outlasts
   * `elicitationTimeoutMs`, the call's bound or its cancellation (fail closed). Answered
   * content never reaches errors or logs (E6).
   */
  readonly onElicitation?: McpElicitor;
  /** Told how each elicitation of this call was answered (by the elicitor, or declined by the bridge, and why): what a journal records. */
  readonly onElicitationAnswered?: (outcome: McpElicitationOutcome) => void;
}

/**
 * The settled result of one MCP call: the native call boundary's `ExecutionResult`
 * itself, so the runtime journals both alike.
 */
export type McpCallResult = ExecutionResult;

/**
 * One runtime session's view of its MCP providers: the connections it bound (started
 * lazily by `discover()`, once), the catalogs it discovered, and the cleanup of both.
 * Sessions never share a process.
 *
 * @example
 * ```ts
 * const session = bridge.openSession("s-1");
 * const { catalogs, unavailable } = await session.discover(["acer"]);
 * const result = await session.callTool("acer", "acer_care_center_batterystatus_get", {}, {});
 * await session.close();
 * await session.joinCleanup();
 * ```
 */
export interface McpSession {
  readonly sessionId: string;
  /**
   * Connects each namespace's provider (lazily, once; again after a crash) and lists
   * its tools, all in parallel (M2). A provider that fails is reported in
   * `unavailable` and never blocks or fails the others. A tool that requires MCP tasks
   * is withheld: left out of the catalog's `tools` (so neither a bundle nor a call can
   * reach it), listed in its `withheldTools` and named in a diagnostic. Rejects only when
   * the session is closed.
   */
  discover(namespaces: readonly string[], options?: { readonly signal?: AbortSignal }): Promise<DiscoveryResult>;
  /**
   * Calls a remote tool of the session's current catalog (E1–E4). Never throws: every
   * end is an outcome. A name the catalog does not publish fails before anything is sent;
   * a result that breaks the tool's `outputSchema` fails `MCP_OUTPUT_INVALID`.
   */
  callTool(namespace: string, remoteName: string, args: unknown, options: McpCallOptions): Promise<McpCallResult>;
  /**
   * Whether the namespace's provider has a live connection now: false before its first
   * discovery, and once its process exited or its connection closed (the next
   * `discover()` reconnects). A call to a provider that is not connected fails unsent,
   * except when a streamable-HTTP server forgot the session (HTTP 404): that call starts
   * a new session first.
   */
  connected(namespace: string): boolean;
  /**
   * The OAuth scopes of the token the namespace's connection last sent (M8), for the
   * journal's record of a call: `[]` for a token that names none; undefined when the
   * provider runs no OAuth, or before a token was sent. Never the token.
   */
  authorizedScopes(namespace: string): readonly string[] | undefined;
  /**
   * Whether the session's current catalog of the namespace is known to be stale: the
   * provider announced a change to its tools (`notifications/tools/list_changed`) since it
   * was listed, or a renewed HTTP session found another catalog. A caller holding that
   * catalog discovers again before calling, so a changed tool is approved again (M3).
   * False for a namespace never discovered, and for a provider that announces nothing.
   */
  catalogChanged(namespace: string): boolean;
  /** Ends this session's processes (whole trees) and remote sessions; in-flight calls settle as cancelled. Idempotent. */
  close(): Promise<void>;
  /** Waits for every cleanup this session requested; rejects (sticky) if any failed or could not be confirmed (M4). */
  joinCleanup(): Promise<void>;
}
