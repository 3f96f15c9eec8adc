/**
 * Stable codes of `serve --stdio` answers and `HarnessClient` rejections, beside the
 * runtime's own codes (`TOOL_NOT_REGISTERED`, `SESSION_CLOSED`, …) that pass through. An
 * error response carries one as `error.data.code`; a rejected `HarnessClient` promise as
 * the `OpenWorkerError`'s `code`.
 *
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error, HARNESS_ERROR_CODES.JSON_RPC_CLOSED)) await restartHarness();
 * ```
 */
export const HARNESS_ERROR_CODES = Object.freeze({
  /** A request names a session that is not open (never opened, or closed). */
  SESSION_UNKNOWN: "SESSION_UNKNOWN",
  /** A request's params are missing a field or have the wrong type; the message names it. */
  PARAMS_INVALID: "PARAMS_INVALID",
  /** An unknown method (the message lists the methods), or a host callback the client does not answer. */
  METHOD_NOT_FOUND: "METHOD_NOT_FOUND",
  /** A request after `shutdown` began. */
  HARNESS_SHUTTING_DOWN: "HARNESS_SHUTTING_DOWN",
  /** `HarnessClient`: the connection closed (or the child died) before the answer came. */
  JSON_RPC_CLOSED: "JSON_RPC_CLOSED",
  /** `HarnessClient`: the request's signal aborted before the answer came (already aborted: nothing was sent). */
  JSON_RPC_CANCELLED: "JSON_RPC_CANCELLED",
  /** `HarnessClient.spawn`: no host entry to start (`options.entry` not given and `process.argv[1]` empty). */
  HARNESS_ENTRY_MISSING: "HARNESS_ENTRY_MISSING",
  /** Something the harness did not expect; the message says what. */
  INTERNAL: "INTERNAL",
});

/**
 * The methods `serve --stdio` answers (docs/serve-stdio-protocol.md has each one's params and results).
 *
 * @example
 * ```ts
 * HARNESS_METHODS.includes("turn.run"); // true
 * ```
 */
export const HARNESS_METHODS = Object.freeze([
  "session.open",
  "turn.run",
  "turn.cancel",
  "call",
  "session.close",
  "inventory.mcp",
  "models.list",
  "models.readiness",
  "shutdown",
] as const);
