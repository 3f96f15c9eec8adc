import type { ProgressEvent, ProgressReporter } from "../context.js";
import { LIMITS, utf8Bytes } from "../limits.js";
import type { LimitBreach } from "./outcome.js";

/** What a call's progress reporter accepted and dropped (E2). */
export interface ProgressStats {
  accepted: number;
  dropped: number;
  jsonBytes: number;
  /** The first breach of each limit, in order. */
  readonly breaches: LimitBreach[];
}

/** A reporter plus its counters; `close()` makes later reports no-ops (after the call settled). */
export interface BoundedProgress {
  readonly reporter: ProgressReporter;
  readonly stats: ProgressStats;
  close(): void;
}

/**
 * Creates the bounded progress reporter of one call (E2): at most 64 events, 4 KB per
 * message, 16 KB of progress JSON. An event past a bound is dropped and counted, the
 * first breach of each limit is recorded; the tool never sees an exception.
 *
 * @example
 * ```ts
 * const progress = createBoundedProgress((event) => console.log(event.message));
 * progress.reporter.report({ message: "half way", progress: 1, total: 2 });
 * ```
 */
export function createBoundedProgress(onEvent?: (event: ProgressEvent) => void): BoundedProgress {
  return new Bounded(onEvent);
}

/**
 * One call's reporter, its counters and its `close`, in one object: every call makes one,
 * so it is a class rather than a handful of closures made per call. `report` is an own
 * arrow function so that a tool may pass it around detached from `context.progress`.
 */
class Bounded implements BoundedProgress, ProgressReporter {
  readonly stats: ProgressStats = { accepted: 0, dropped: 0, jsonBytes: 0, breaches: [] };
  #closed = false;
  readonly #onEvent: ((event: ProgressEvent) => void) | undefined;

  constructor(onEvent: ((event: ProgressEvent) => void) | undefined) {
    this.#onEvent = onEvent;
  }

  get reporter(): ProgressReporter {
    return this;
  }

  close(): void {
    this.#closed = true;
  }

  readonly report = (event: ProgressEvent): boolean => this.#report(event);

  #report(event: ProgressEvent): boolean {
    if (this.#closed) return false;
    const stats = this.stats;
    if (stats.accepted >= LIMITS.progressEvents) {
      return this.#breach("progressEvents", stats.accepted + 1, LIMITS.progressEvents, "too many progress events");
    }
    const message = event?.message;
    if (message !== undefined) {
      const bytes = utf8Bytes(String(message));
      if (bytes > LIMITS.progressMessageBytes) {
        return this.#breach("progressMessageBytes", bytes, LIMITS.progressMessageBytes, "progress message too long");
      }
    }
    let serialized: string;
    try {
      serialized = JSON.stringify(toPlainEvent(event));
    } catch {
      return this.#breach("progressJsonBytes", 0, LIMITS.progressJsonBytes, "progress event is not JSON");
    }
    const bytes = utf8Bytes(serialized);
    if (stats.jsonBytes + bytes > LIMITS.progressJsonBytes) {
      return this.#breach("progressJsonBytes", stats.jsonBytes + bytes, LIMITS.progressJsonBytes, "progress JSON over budget");
    }
    stats.accepted++;
    stats.jsonBytes += bytes;
    this.#onEvent?.(JSON.parse(serialized) as ProgressEvent);
    return true;
  }

  #breach(limit: LimitBreach["limit"], actual: number, max: number, message: string): false {
    this.stats.dropped++;
    if (!this.stats.breaches.some((known) => known.limit === limit)) this.stats.breaches.push({ limit, actual, max, message });
    return false;
  }
}

function toPlainEvent(event: ProgressEvent): ProgressEvent {
  const plain: { message?: string; progress?: number; total?: number; data?: ProgressEvent["data"] } = {};
  if (event.message !== undefined) plain.message = String(event.message);
  if (typeof event.progress === "number" && Number.isFinite(event.progress)) plain.progress = event.progress;
  if (typeof event.total === "number" && Number.isFinite(event.total)) plain.total = event.total;
  if (event.data !== undefined) plain.data = event.data;
  return plain;
}
