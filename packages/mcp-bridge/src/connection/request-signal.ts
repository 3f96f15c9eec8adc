import { onAbort } from "@openworker/tools-sdk/internal/execution";

/** One request's own abort signal, and how to let go of the caller's. */
export interface RequestSignal {
  /** What the request is made with: aborted when the caller's signal aborts, until `release()`. */
  readonly signal: AbortSignal;
  /** The request settled: the caller's signal stops holding it. Safe to call more than once. */
  readonly release: () => void;
}

/**
 * A signal for one request that follows `caller` until the request settles.
 *
 * The SDK's HTTP transport hands every request the same long-lived signal. Node's fetch
 * (undici) adds an `abort` listener to the signal it is given and removes it only when the
 * request is garbage-collected, so that signal gathered one listener per request: hundreds
 * between collections, and Node's `MaxListenersExceededWarning` on the host's stderr.
 * Given a signal of its own, fetch's listener goes with the request; the caller's signal
 * holds one shared listener (`onAbort`), and an entry for each request still running.
 * `AbortSignal.any` would do the linking, but on Node 20 it leaks too (nodejs/node#55351).
 *
 * `undefined` when there is nothing to follow, or `caller` has aborted already (fetch then
 * rejects at once and adds no listener): the request is made with `caller` as it is.
 */
export function requestSignal(caller: AbortSignal | null | undefined): RequestSignal | undefined {
  if (!caller || caller.aborted) return undefined;
  const own = new AbortController();
  const release = onAbort(caller, (reason) => own.abort(reason));
  return { signal: own.signal, release };
}
