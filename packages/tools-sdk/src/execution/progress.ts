import type { ProgressEvent, ProgressReporter } from "../context.js";
import type { JsonValue } from "../json.js";
import { LIMITS, utf8Bytes } from "../limits.js";
import { clip } from "../text.js";
import { MAX_ARGUMENT_DEPTH } from "./arguments.js";
import { typeWords } from "./describe.js";
import { copyPlainJson } from "./normalize.js";
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
 * of an event is read once; an event that cannot be read (a throwing getter, a message
 * whose `toString` throws), that is not a plain object (`report("text")`), whose
 * `progress`/`total` is not a finite number, or whose `data` is not strict JSON (a `Map`,
 * `Date`, function, `NaN`, …, as for results) is dropped and counted under
 * `progressJsonBytes`, never coerced. The host's `onEvent` gets a plain copy.
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
    let read: PlainEvent | string;
    try {
      read = readEvent(event);
    } catch {
      // A getter, a Proxy trap or a message's `toString` threw: the tool must not see it
      // (E2), so the event is dropped and counted with the events that are not JSON.
      return this.#breach("progressJsonBytes", 0, LIMITS.progressJsonBytes, "progress event could not be read");
    }
    // Refused, not coerced: `report("text")` is not an event with no fields, and data
    // holding a Map is not data holding `{}`.
    if (typeof read === "string") return this.#breach("progressJsonBytes", 0, LIMITS.progressJsonBytes, read);
    const { plain, characters } = read;
    if (plain.message !== undefined) {
      const bytes = utf8Bytes(plain.message);
      if (bytes > LIMITS.progressMessageBytes) {
        return this.#breach("progressMessageBytes", bytes, LIMITS.progressMessageBytes, "progress message too long");
      }
    }
    // Each character is at least a byte: an event whose strings alone are over the budget
    // is refused without building its JSON.
    if (stats.jsonBytes + characters > LIMITS.progressJsonBytes) {
      return this.#breach("progressJsonBytes", stats.jsonBytes + characters, LIMITS.progressJsonBytes, "progress JSON over budget");
    }
    // A plain copy, checked while it was made: serializing it cannot throw.
    const bytes = utf8Bytes(JSON.stringify(plain));
    if (stats.jsonBytes + bytes > LIMITS.progressJsonBytes) {
      return this.#breach("progressJsonBytes", stats.jsonBytes + bytes, LIMITS.progressJsonBytes, "progress JSON over budget");
    }
    stats.accepted++;
    stats.jsonBytes += bytes;
    try {
      // The copy, not the tool's event: a getter or a later change of the tool's objects
      // cannot change what the host records.
      this.#onEvent?.(plain);
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

/** A progress event as read: its plain copy, and the characters of its strings (a lower bound of its bytes). */
interface PlainEvent {
  readonly plain: ProgressEvent;
  readonly characters: number;
}

// An event within the 16 KB budget has fewer values than this (each takes two bytes or more).
const MAX_DATA_VALUES = LIMITS.progressJsonBytes / 2;

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function notFinite(field: "progress" | "total", value: unknown): string {
  return `progress event's ${field} is ${typeof value === "number" ? String(value) : typeWords(value)}, not a finite number`;
}

/**
 * A progress event read into a plain copy, each field read once (a getter could answer
 * differently on a second read), or why it is refused: an event that is not a plain
 * object (a string, a number, an array, `null`, a class instance), a `progress` or `total`
 * that is not a finite number, `data` that is not strict JSON under the rules results
 * follow (a `Map`, `Set`, `Date`, function, `undefined`, BigInt, `NaN`, a cycle, deeper
 * than 128 levels). A `message` is read as its text, as before. Throws what a getter, a
 * Proxy trap or a message's `toString` throws.
 */
function readEvent(event: unknown): PlainEvent | string {
  if (typeof event !== "object" || event === null || Array.isArray(event)) {
    return `progress event is ${Array.isArray(event) ? "an array" : typeWords(event)}, not an object such as { message: "…" }`;
  }
  const prototype: unknown = Object.getPrototypeOf(event);
  if (prototype !== Object.prototype && prototype !== null) return "progress event is a class instance, not a plain object";
  const { message, progress, total, data } = event as ProgressEvent;
  const plain: { message?: string; progress?: number; total?: number; data?: JsonValue } = {};
  let characters = 0;
  if (message !== undefined) {
    plain.message = String(message);
    characters += plain.message.length;
  }
  // Two plain checks: this runs for every event, and an array of pairs costs five times more.
  if (progress !== undefined) {
    if (!isFiniteNumber(progress)) return notFinite("progress", progress);
    plain.progress = progress;
  }
  if (total !== undefined) {
    if (!isFiniteNumber(total)) return notFinite("total", total);
    plain.total = total;
  }
  if (data !== undefined) {
    const copy = copyPlainJson(data, MAX_DATA_VALUES, 1);
    if (!copy.ok) {
      if (copy.tooDeep) return `progress data nests deeper than ${MAX_ARGUMENT_DEPTH} levels`;
      if (copy.tooLarge) return "progress JSON over budget";
      const at = copy.path.length > 0 ? `at /${copy.path.join("/")} ` : "";
      const reason = `progress data is not JSON: ${at.length > 200 ? `${at.slice(0, 200)}… ` : at}${copy.problem}`;
      return clip(reason, 500);
    }
    plain.data = copy.value;
    characters += copy.characters;
  }
  return { plain, characters };
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
