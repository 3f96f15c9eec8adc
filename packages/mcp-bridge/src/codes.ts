/**
 * The stable error codes of the MCP bridge. Discovery reports them in
 * `DiscoveryResult.unavailable`, calls in `McpCallResult.error.code`, and thrown
 * {@link OpenWorkerError}s carry them as `code`.
 *
 * @example
 * ```ts
 * if (result.error?.code === MCP_ERROR_CODES.toolNotPublished) rediscover();
 * ```
 */
export const MCP_ERROR_CODES = Object.freeze({
  /** A namespace no registered provider owns. */
  providerUnknown: "MCP_PROVIDER_UNKNOWN",
  /** Two provider definitions share a namespace (N5). */
  providerDuplicate: "MCP_PROVIDER_DUPLICATE",
  /** A provider definition is malformed (no program, bad URL, a URL carrying credentials, unknown transport). */
  providerInvalid: "MCP_PROVIDER_INVALID",
  /** A provider with `placement: "sandbox"` and no sandbox launcher: never started as host code. */
  sandboxUnavailable: "MCP_SANDBOX_UNAVAILABLE",
  /** The sandbox launcher threw or returned something unusable: the provider was not started. */
  sandboxFailed: "MCP_SANDBOX_FAILED",
  /** The stdio program could not be started (missing, not executable). */
  spawnFailed: "MCP_SPAWN_FAILED",
  /** The provider did not finish `initialize` within `connectTimeoutMs`. */
  connectTimeout: "MCP_CONNECT_TIMEOUT",
  /** The provider refused or broke the `initialize` handshake. */
  connectFailed: "MCP_CONNECT_FAILED",
  /**
   * The provider requires OAuth authorization (M8) and the bridge has no tokens for it,
   * and no host step to obtain them this turn: authorize it outside the turn (the CLI's
   * `auth login`).
   */
  authorizationRequired: "MCP_AUTHORIZATION_REQUIRED",
  /** The OAuth flow failed (the authorization server refused, the redirect did not match, the host's step failed or timed out). */
  authorizationFailed: "MCP_AUTHORIZATION_FAILED",
  /** The OAuth token store could not be read or written. */
  tokenStoreFailed: "MCP_TOKEN_STORE_FAILED",
  /** `tools/list` did not finish within `discoveryTimeoutMs`. */
  discoveryTimeout: "MCP_DISCOVERY_TIMEOUT",
  /** `tools/list` failed (error response, closed connection). */
  discoveryFailed: "MCP_DISCOVERY_FAILED",
  /** The caller aborted discovery. */
  discoveryCancelled: "MCP_DISCOVERY_CANCELLED",
  /** The provider returned the same pagination cursor twice. */
  cursorRepeated: "MCP_CATALOG_CURSOR_REPEATED",
  /** The catalog has more pages or tools than the bridge accepts. */
  catalogTooLarge: "MCP_CATALOG_TOO_LARGE",
  /** The catalog publishes one tool name twice. */
  catalogDuplicateTool: "MCP_CATALOG_DUPLICATE_TOOL",
  /** A call names a remote tool the session's current catalog does not publish. */
  toolNotPublished: "MCP_TOOL_NOT_PUBLISHED",
  /**
   * The call was approved for another version of the tool: since then a discovery took a
   * catalog that describes it otherwise (M3). Not sent; the next preparation takes the new one.
   */
  toolChanged: "MCP_TOOL_CHANGED",
  /** The provider's connection is gone; it reconnects on the session's next discovery. */
  providerUnavailable: "MCP_PROVIDER_UNAVAILABLE",
  /** The provider process exited (or its stdio closed, or it stopped reading its stdin and the bridge ended it) while the call was running. */
  providerCrashed: "MCP_PROVIDER_CRASHED",
  /**
   * The streamable-HTTP provider could not be reached while connecting (refused, DNS, TLS,
   * reset: the message names its redacted URL and the cause) or while the call was running.
   */
  providerUnreachable: "MCP_PROVIDER_UNREACHABLE",
  /**
   * The streamable-HTTP server no longer knows the session (HTTP 404: it restarted or
   * expired it). The request was never processed and is not resent; the connection
   * ended, and the next call or discovery starts a new session.
   */
  remoteSessionExpired: "MCP_REMOTE_SESSION_EXPIRED",
  /** The tool answered with `isError: true`: a tool error the model sees. */
  toolError: "MCP_TOOL_ERROR",
  /** The provider answered the request with a JSON-RPC error (unknown tool, invalid params…). */
  requestFailed: "MCP_REQUEST_FAILED",
  /**
   * The provider's result does not match the MCP `CallToolResult` shape or cannot be used
   * (nesting too deep), or the streamable-HTTP provider answered the call's POST without
   * its answer (JSON for another id, a bare 202 with no event stream open).
   */
  resultInvalid: "MCP_RESULT_INVALID",
  /**
   * The tool declares an `outputSchema` and its result has no `structuredContent`, or one
   * that does not match it (the message names the JSON pointer); or the schema itself does
   * not compile, and the tool is not called. A tool failure the model sees.
   */
  outputInvalid: "MCP_OUTPUT_INVALID",
  /** Arguments must be a JSON object (MCP `tools/call` requires one). */
  argumentsInvalid: "MCP_ARGUMENTS_INVALID",
  /** The session was closed (before or during the call, or before discovery). */
  sessionClosed: "MCP_SESSION_CLOSED",
  /** The bridge was disposed; no new session can open. */
  bridgeDisposed: "MCP_BRIDGE_DISPOSED",
  /** A cleanup failed or its processes could not be confirmed gone (M4); sticky. */
  cleanupUnconfirmed: "MCP_CLEANUP_UNCONFIRMED",
});
