import { onAbort } from "@openworker/tools-sdk/internal/execution";

/** A signal that aborts when either of two does, and the release of its links. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Unlinks it from both sources; call it once the work it served has settled. Idempotent. */
  readonly release: () => void;
}

/**
 * A signal that aborts with the first of `first` and `second` to abort, for one host
 * call or preparation, unlinked by `release()` when that work settles.
 *
 * Not `AbortSignal.any`: on Node 20 each call of it leaves an entry on every source
 * signal that is never removed (nodejs/node#55351), so a host passing one long-lived
 * signal to every `callTool` grew by about 80 bytes a call for as long as the process
 * lived, closed sessions included. Here each source holds the link through `onAbort` (one
 * listener per signal) only until `release()`.
 *
 * @example
 * ```ts
 * const { signal, release } = linkSignals(options.signal, closeSignal);
 * return work(signal).finally(release);
 * ```
 */
export function linkSignals(first: AbortSignal, second: AbortSignal): LinkedSignal {
  if (first.aborted) return { signal: first, release: noop };
  if (second.aborted) return { signal: second, release: noop };
  const controller = new AbortController();
  const abort = (reason: unknown): void => {
    release();
    controller.abort(reason);
  };
  const unlinkFirst = onAbort(first, abort);
  const unlinkSecond = onAbort(second, abort);
  function release(): void {
    unlinkFirst();
    unlinkSecond();
  }
  return { signal: controller.signal, release };
}

function noop(): void {}
