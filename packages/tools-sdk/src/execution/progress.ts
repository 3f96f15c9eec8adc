import type { ProgressEvent, ProgressReporter } from "../context.js";
import type { JsonValue } from "../json.js";
import { LIMITS, utf8Bytes } from "../limits.js";
import { MAX_ARGUMENT_DEPTH, nestsDeeperThan } from "./arguments.js";
import type { CallError, CallOutcome, LimitBreach, NormalizedOutput } from "./outcome.js";

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
 * first breach of each limit is recorded; the tool never sees an exception, not even
 * one thrown by `onEvent` (the host's sink: the event still counts as accepted). Each field
 * of an event is read once; one that cannot be read (a throwing getter, a message whose
 * `toString` throws) is dropped and counted under `progressJsonBytes`.
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
 * One call's counters and its `close`: every call makes one, so it is a class rather than
 * a handful of closures made per call. The tool gets only {@link Bounded.reporter}, a
 * frozen object holding `report` and nothing else (E2, E4): handed this object, a tool
 * could reset `stats` and report without bound. `report` is an arrow function so that a
 * tool may pass it around detached from `context.progress`.
 */
class Bounded implements BoundedProgress {
  readonly stats: ProgressStats = { accepted: 0, dropped: 0, jsonBytes: 0, breaches: [] };
  readonly reporter: ProgressReporter;
  #closed = false;
  readonly #onEvent: ((event: ProgressEvent) => void) | undefined;

  constructor(onEvent: ((event: ProgressEvent) => void) | undefined) {
    this.#onEvent = onEvent;
    this.reporter = Object.freeze({ report: (event: ProgressEvent): boolean => this.#report(event) });
  }

  close(): void {
    this.#closed = true;
  }

  #report(event: ProgressEvent): boolean {
    if (this.#closed) return false;
    const stats = this.stats;
    if (stats.accepted >= LIMITS.progressEvents) {
      return this.#breach("progressEvents", stats.accepted + 1, LIMITS.progressEvents, "too many progress events");
    }
    let plain: ProgressEvent;
    try {
      plain = toPlainEvent(event);
    } catch {
      // A getter or a message's `toString` threw: the tool must not see it (E2), so the
      // event is dropped and counted with the events that are not JSON.
      return this.#breach("progressJsonBytes", 0, LIMITS.progressJsonBytes, "progress event could not be read");
    }
    if (plain.message !== undefined) {
      const bytes = utf8Bytes(plain.message);
      if (bytes > LIMITS.progressMessageBytes) {
        return this.#breach("progressMessageBytes", bytes, LIMITS.progressMessageBytes, "progress message too long");
      }
    }
    let serialized: string;
    try {
      serialized = JSON.stringify(plain);
    } catch {
      return this.#breach("progressJsonBytes", 0, LIMITS.progressJsonBytes, "progress event is not JSON");
    }
    const bytes = utf8Bytes(serialized);
    if (stats.jsonBytes + bytes > LIMITS.progressJsonBytes) {
      return this.#breach("progressJsonBytes", stats.jsonBytes + bytes, LIMITS.progressJsonBytes, "progress JSON over budget");
    }
    // The copy the host gets, read back from the text: also what is checked for depth, so
    // a getter or Proxy in `data` cannot answer differently the second time.
    const copy = JSON.parse(serialized) as ProgressEvent;
    if (copy.data !== undefined && nestsDeeperThan(copy.data as JsonValue, MAX_ARGUMENT_DEPTH)) {
      // Deeper than a journal or a model message can carry: dropped like an event that is
      // not JSON, rather than accepted here and lost by the host's journal.
      return this.#breach("progressJsonBytes", bytes, LIMITS.progressJsonBytes, `progress data nests deeper than ${MAX_ARGUMENT_DEPTH} levels`);
    }
    stats.accepted++;
    stats.jsonBytes += bytes;
    try {
      this.#onEvent?.(copy);
    } catch {
      // The host's sink failed (its journal, its event listener): the event was within
      // bounds, and what the host could not record is the host's to report, not the tool's.
    }
    return true;
  }

  #breach(limit: LimitBreach["limit"], actual: number, max: number, message: string): false {
    this.stats.dropped++;
    if (!this.stats.breaches.some((known) => known.limit === limit)) this.stats.breaches.push({ limit, actual, max, message });
    return false;
  }
}

/**
 * The fields of a progress event, each read once (a getter could answer differently on a
 * second read). Throws what a getter or a message's `toString` throws.
 */
function toPlainEvent(event: ProgressEvent): ProgressEvent {
  const { message, progress, total, data } = event;
  const plain: { message?: string; progress?: number; total?: number; data?: ProgressEvent["data"] } = {};
  if (message !== undefined) plain.message = String(message);
  if (typeof progress === "number" && Number.isFinite(progress)) plain.progress = progress;
  if (typeof total === "number" && Number.isFinite(total)) plain.total = total;
  if (data !== undefined) plain.data = data;
  return plain;
}

/** What a call settled as, before its progress is looked at (see {@link withProgressLimit}). */
export interface SettledFields {
  readonly outcome: CallOutcome;
  readonly output?: NormalizedOutput;
  readonly error?: CallError;
  readonly breach?: LimitBreach;
}

/** The code of a limit breach, as the journal records it (`FAULT_CODES.limitExceeded`). */
const LIMIT_EXCEEDED = "LIMIT_EXCEEDED";

/**
 * E2 with E4: progress past a bound is a limit breach, and a limit breach stops the turn.
 * What went past the bound was dropped and counted while the call ran on; once it has
 * settled, a call that succeeded or returned a `ToolError` ends `limit_exceeded` with the
 * first breach. A succeeded call keeps its output (the journal keeps it: the call may
 * have had effects; the model is told of the breach, not shown the result), a
 * `ToolError` is quoted in the message. A call that already ended in a fault (timed out,
 * cancelled, crashed, another limit) keeps its outcome; its breaches stay in `stats`.
 * The MCP bridge applies the same rule to a provider's progress notifications.
 */
export function withProgressLimit<T extends SettledFields>(settled: T, stats: ProgressStats): T | SettledFields {
  const first = stats.breaches[0];
  if (first === undefined || (settled.outcome !== "succeeded" && settled.outcome !== "failed")) return settled;
  const dropped = `${stats.dropped} update${stats.dropped === 1 ? "" : "s"} dropped`;
  const answered = settled.outcome === "failed" && settled.error ? `; the tool then answered ${settled.error.code}: ${settled.error.message}` : "";
  const limited: { -readonly [K in keyof SettledFields]: SettledFields[K] } = {
    outcome: "limit_exceeded",
    breach: first,
    error: { code: LIMIT_EXCEEDED, message: `progress past its bounds: ${first.message} (${dropped})${answered}` },
  };
  if (settled.output !== undefined) limited.output = settled.output;
  return limited;
}
