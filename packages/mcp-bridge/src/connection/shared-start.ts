import { onAbort, untilAborted } from "@openworker/tools-sdk/internal/execution";
import type { ProviderConnection } from "./connection.js";

/** A provider start shared by the discoveries waiting for it (see `connection`). */
export interface PendingStart {
  readonly promise: Promise<ProviderConnection>;
  /** Aborted by the session's close, or when the last waiting caller cancels. */
  readonly start: AbortController;
  waiting: number;
}

/**
 * Waits for a shared start on behalf of one caller: a caller that cancels rejects at once
 * with its signal's reason; the last one to leave abandons the start.
 */
export function waitForStart(pending: PendingStart, callerSignal: AbortSignal | undefined): Promise<ProviderConnection> {
  pending.waiting += 1;
  if (callerSignal === undefined) return pending.promise;
  const leave = onAbort(callerSignal, (reason) => {
    pending.waiting -= 1;
    if (pending.waiting === 0) pending.start.abort(reason);
  });
  pending.promise.then(leave, leave);
  return untilAborted(pending.promise, callerSignal);
}
