/** Stable codes of the runtime's own errors and call outcomes. */
export const RUNTIME_ERROR_CODES = Object.freeze({
  /** The alias the model used is not in this turn's selection (no search is made). */
  UNKNOWN_TOOL: "UNKNOWN_TOOL",
  /** Arguments were not JSON or did not match the selected schema (E5). */
  ARGUMENTS_INVALID: "ARGUMENTS_INVALID",
  /** Arguments larger than 256 KB (`MAX_ARGUMENT_BYTES` of `@openworker/tools-sdk/internal/execution`): refused unread. */
  ARGUMENTS_TOO_LARGE: "ARGUMENTS_TOO_LARGE",
  /** The model asked for more tool calls in one attempt than the runtime runs; the rest were not run. */
  TOO_MANY_CALLS: "TOO_MANY_CALLS",
  /**
   * A model answer asked for more tool calls than any answer may hold (8 × the calls run
   * per answer): the whole answer is dropped, nothing of it runs or is journaled as a
   * call, and the turn stops as a model failure.
   */
  MODEL_TOO_MANY_CALLS: "MODEL_TOO_MANY_CALLS",
  /** The approval step said no (a person, a policy, a timeout or an error: fail closed). */
  APPROVAL_DENIED: "APPROVAL_DENIED",
  /** A tool's alias is longer than the model provider accepts. */
  ALIAS_TOO_LONG_FOR_PROVIDER: "ALIAS_TOO_LONG_FOR_PROVIDER",
  /**
   * A bundle selects a name no registered native or provider namespace owns (N7) that the
   * bundle resolver cannot classify. Usually the resolver's own code is thrown instead,
   * as `tools check` reports it: `TOOL_NOT_REGISTERED` (the namespace's tools listed) or
   * `NAMESPACE_UNKNOWN` (the registered namespaces listed).
   */
  TOOL_NOT_FOUND: "TOOL_NOT_FOUND",
  /** A second turn was started while one is running in the same session. */
  TURN_IN_PROGRESS: "TURN_IN_PROGRESS",
  SESSION_CLOSED: "SESSION_CLOSED",
  RUNTIME_CLOSED: "RUNTIME_CLOSED",
  /** No model provider with that id is configured. */
  MODEL_PROVIDER_UNKNOWN: "MODEL_PROVIDER_UNKNOWN",
  /** The model provider failed; the turn stopped. */
  MODEL_FAILED: "MODEL_FAILED",
  /** A turn used all its model attempts without a final answer. */
  TURN_ATTEMPTS_EXHAUSTED: "TURN_ATTEMPTS_EXHAUSTED",
  /** A model-context hook was skipped (over its cap, slow, throwing, or over the total). */
  MODEL_CONTEXT_SKIPPED: "MODEL_CONTEXT_SKIPPED",
  /** A `turnFinished` or `revoke` hook threw or rejected (a `diagnostic` event names the tool; the turn is not changed). */
  HOOK_FAILED: "HOOK_FAILED",
  /** An MCP provider could not be reached at turn preparation; its tools are unavailable this turn. */
  PROVIDER_UNAVAILABLE: "PROVIDER_UNAVAILABLE",
  /** A tool's image was withheld because its consent recheck failed (T4). */
  IMAGE_WITHHELD: "IMAGE_WITHHELD",
  /**
   * A diagnostic, not an error: a log message an MCP provider sent during the session,
   * bounded and redacted (its text is `<namespace> <level>: <message>`), never model text.
   */
  PROVIDER_LOG: "PROVIDER_LOG",
  /**
   * The call pipeline itself failed after the call was journaled (a value that defeated
   * every check, a failing hook): the call is journaled `crashed` with this code and the
   * turn stops (E4), instead of the call being left without a terminal record (A3).
   */
  CALL_PIPELINE_FAILED: "CALL_PIPELINE_FAILED",
  /**
   * Stands for a tool's error code that held a secret the runtime was handed (E6): a code
   * is a bare identifier, so the secret cannot be masked inside it (`ERR_[redacted]` is no
   * code) and the whole code is replaced. The message is redacted as always.
   */
  CODE_REDACTED: "CODE_REDACTED",
  /** An option of `openSession` (or the runtime) that cannot work: the message names it and what it takes. */
  OPTIONS_INVALID: "OPTIONS_INVALID",
});
