/** What {@link onAbort} returns: call it once the call no longer needs to hear of the abort. */
export type AbortListenerRemover = () => void;

/**
 * Listens for `signal`'s abort on behalf of one call, through one listener per signal
 * shared by every call that waits on it.
 *
 * A session's signal is shared by every call of the session: adding and removing one
 * `EventTarget` listener per call, with 32 calls in flight on it, cost about 1.9 µs a call
 * on Node 20 (removal walks the list of listeners) and trips Node's "possible
 * EventTarget memory leak" warning past 10. Here a call's listener is an entry in a
 * small array (removed by swapping with the last), and the signal has one listener for
 * its whole life (a signal that is collected takes it along).
 *
 * `listener` runs at most once, with the signal's reason. The signal must not be aborted
 * yet (check `signal.aborted` first: an aborted signal fires no more events).
 *
 * @example
 * ```ts
 * const remove = onAbort(signal, (reason) => settle({ kind: "cancelled", reason }));
 * // … the call settles on its own:
 * remove();
 * ```
 */
export function onAbort(signal: AbortSignal, listener: (reason: unknown) => void): AbortListenerRemover {
  let fanOut = fanOuts.get(signal);
  if (fanOut === undefined) {
    fanOut = new FanOut();
    fanOuts.set(signal, fanOut);
    const fired = fanOut;
    signal.addEventListener("abort", () => fired.fire(signal.reason), { once: true });
  }
  return fanOut.add(listener);
}

/**
 * `work`, or a rejection with `signal`'s reason as soon as it aborts. The work itself goes
 * on, left to itself: its own later rejection is handled, never reported as unhandled. The
 * listener goes through {@link onAbort} and is removed when `work` settles. Without a
 * signal, `work` as a promise. For callers that stop waiting on shared work (a preparation,
 * a provider start) or on a call they cannot interrupt (a model provider).
 *
 * @example
 * ```ts
 * const selection = await untilAborted(sharedPreparation, caller.signal);
 * ```
 */
export function untilAborted<T>(work: PromiseLike<T>, signal: AbortSignal | undefined): Promise<T> {
  const promise = Promise.resolve(work);
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.then(undefined, () => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const stopListening = onAbort(signal, (reason) => {
      promise.then(undefined, () => undefined);
      reject(reason as Error);
    });
    promise.then(
      (value) => {
        stopListening();
        resolve(value);
      },
      (error: unknown) => {
        stopListening();
        reject(error as Error);
      },
    );
  });
}

const fanOuts = new WeakMap<AbortSignal, FanOut>();

interface Entry {
  readonly listener: (reason: unknown) => void;
  /** Its place in the array; -1 once removed or fired. */
  index: number;
}

class FanOut {
  private entries: Entry[] = [];

  add(listener: (reason: unknown) => void): AbortListenerRemover {
    const entry: Entry = { listener, index: this.entries.length };
    this.entries.push(entry);
    return () => this.remove(entry);
  }

  fire(reason: unknown): void {
    const entries = this.entries;
    this.entries = [];
    for (const entry of entries) entry.index = -1;
    for (const entry of entries) {
      try {
        entry.listener(reason);
      } catch (error) {
        // As an `EventTarget` listener's error would: reported, without skipping the others.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  private remove(entry: Entry): void {
    const at = entry.index;
    if (at < 0) return;
    entry.index = -1;
    const last = this.entries.pop()!;
    if (last !== entry) {
      this.entries[at] = last;
      last.index = at;
    }
  }
}
