import type { JsonValue } from "./json.js";

/** One progress update of a running call. */
export interface ProgressEvent {
  /** Human-readable status, at most 4 KB (E2). */
  readonly message?: string;
  /** Work done so far, in the unit of `total`. */
  readonly progress?: number;
  /** Total work, when known. */
  readonly total?: number;
  /**
   * Structured detail; counts against the call's 16 KB of progress JSON (E2). Typed
   * `JsonValue | object` so interface-typed values are accepted, as for `ToolOutput.json`;
   * it is read as its JSON text, and what a host receives is that JSON.
   */
  readonly data?: JsonValue | object;
}

/**
 * The bounded progress reporter of one call (T2, E2). At most 64 events, 4 KB per
 * message and 16 KB of progress JSON per call; what goes past a bound is dropped and
 * counted, never an exception in the tool.
 */
export interface ProgressReporter {
  /** Reports progress. Returns `false` when the event was dropped for a limit. */
  report(event: ProgressEvent): boolean;
}

/**
 * Everything the harness hands a call (T2). The ids are harness-owned: never invent
 * your own. `signal` aborts on cancellation or timeout; honour it promptly.
 *
 * @example
 * ```ts
 * async call(context, args) {
 *   context.progress.report({ message: "searching" });
 *   const response = await fetch(url, { signal: context.signal });
 *   ...
 * }
 * ```
 */
export interface ToolContext {
  readonly sessionId: string;
  readonly turnId: string;
  readonly callId: string;
  /** The session's workspace folder (absolute path). */
  readonly workspace: string;
  /** Aborted when the call is cancelled or runs out of time. */
  readonly signal: AbortSignal;
  /** Bounded progress reporter (E2). */
  readonly progress: ProgressReporter;
}
