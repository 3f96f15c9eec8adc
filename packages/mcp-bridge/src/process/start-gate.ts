import { onAbort } from "@openworker/tools-sdk/internal/execution";

/**
 * At most `limit` stdio providers starting at once across a bridge's sessions; the
 * others wait their turn, in order. Starting a child (a Node or Python runtime loading
 * its SDK) is CPU-bound: 64 sessions preparing at once on a 2-core machine started 64
 * processes together, each took past its 10 s connect bound, and 46 of them were killed
 * half-started and reported unavailable. Taken in turns, each start is quick, and its
 * connect bound only begins once it has its turn.
 *
 * A turn lasts until the start settles, or `maxTurnMs` at most: a provider that
 * hangs before `initialize` (it waits for its connect bound) then stops holding up the
 * others, which are likely CPU-bound and quick. A wait ends early when the caller's signal
 * aborts (its discovery was cancelled or the session closed): it then rejects with the
 * signal's reason and takes no turn.
 */
export class StartGate {
  private running = 0;
  /** Waiters in order; a cancelled one stays until its turn comes and is skipped then (O(1) cancel). */
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxTurnMs: number,
  ) {}

  /** Runs `start` once a turn is free; the turn passes on when it settles (either way) or after `maxTurnMs`. */
  async run<T>(signal: AbortSignal, start: () => Promise<T>): Promise<T> {
    // A start cancelled before it asked takes no turn, free or not (nothing is spawned).
    if (signal.aborted) throw signal.reason;
    if (this.running < this.limit) this.running += 1;
    else await this.turn(signal);
    let held = true;
    const passOn = () => {
      if (!held) return;
      held = false;
      this.release();
    };
    const timer = setTimeout(passOn, this.maxTurnMs);
    timer.unref();
    try {
      return await start();
    } finally {
      clearTimeout(timer);
      passOn();
    }
  }

  /** How many starts wait for a turn now (counted when asked: nothing on the way needs it). */
  get queued(): number {
    return this.waiting.filter((waiter) => !waiter.cancelled).length;
  }

  private turn(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      // `onAbort`: many waits may share a signal, and removing a listener from an
      // `EventTarget` walks its list.
      const stopListening = onAbort(signal, (reason) => {
        waiter.cancelled = true;
        reject(reason as Error);
      });
      const waiter: Waiter = {
        cancelled: false,
        go: () => {
          stopListening();
          resolve();
        },
      };
      this.waiting.push(waiter);
    });
  }

  // The turn goes to the next waiter still waiting, as it is (`running` unchanged), or is freed.
  private release(): void {
    for (let next = this.waiting.shift(); next !== undefined; next = this.waiting.shift()) {
      if (next.cancelled) continue;
      next.go();
      return;
    }
    this.running -= 1;
  }
}

interface Waiter {
  cancelled: boolean;
  readonly go: () => void;
}
