import type { JsonValue } from "../json.js";
import { IMAGE_MIME_TYPES, LIMITS, utf8Bytes } from "../limits.js";
import type { ToolImage, ToolOutput } from "../output.js";
import type { CallError, LimitBreach, NormalizedOutput } from "./outcome.js";
import { describeThrown, typeWords } from "./describe.js";

/** Normalization either succeeds, breaks a limit (E3, T4), or finds a value that is not a valid result. */
export type Normalization =
  | { readonly ok: true; readonly output: NormalizedOutput }
  | { readonly ok: false; readonly breach: LimitBreach }
  | { readonly ok: false; readonly invalid: CallError };

const MAX_DEPTH = 128;
// Every JSON value takes at least two bytes serialized, so a result within the byte
// limit has fewer values than this; the bound stops a shared-reference bomb early.
const MAX_NODES = LIMITS.resultBytes / 2;
// Each character of a string or a key is at least a byte of JSON. A result with more than
// this is refused without serializing it: no string of many megabytes is built and
// measured (nor one past V8's longest, which would throw) to learn that it is over.
const MAX_CHARS = 16 * LIMITS.resultBytes;

interface Walk {
  /**
   * The objects and arrays on the path to the value being copied, for cycles: a short
   * array (at most {@link MAX_DEPTH}), not a `Set`, which costs about a microsecond a
   * delete when filled and emptied item by item.
   */
  readonly ancestors: object[];
  nodes: number;
  /** Characters of the strings and keys seen so far: a lower bound of the JSON's bytes. */
  chars: number;
  /** What is wrong with the value at {@link trail}, once something is: the walk stops there. */
  problem: string | undefined;
  /** The keys from the problem up to the root, pushed as the walk unwinds. */
  readonly trail: string[];
  /** How many values the walk copies before it refuses the value as too large. */
  readonly maxNodes: number;
}

/**
 * Turns what a tool resolved with into the normalized result (T3, T4, E3): strict JSON
 * (no `BigInt`, cycles, functions, `undefined`, non-finite numbers or class instances),
 * at most 256 KB serialized, with the text the model sees derived here (a string result
 * is its own text, anything else is its JSON). Images are checked for count, size and
 * type. Oversized structured data is a breach, never silently truncated.
 *
 * Never throws, and reads every value of the tool's once: the JSON is checked while it is
 * copied into fresh plain objects and arrays, each image into a fresh `ToolImage` with its
 * own copy of the bytes, and the copies are what is returned. A getter that answers
 * differently on a second read, or a tool that changes its objects after returning, can
 * therefore not change what was checked. A read that throws (a getter, a Proxy trap)
 * makes the result invalid: `RESULT_NOT_JSON` inside the JSON, `RESULT_INVALID` for
 * `json`, `images` and the images' fields.
 *
 * @example
 * ```ts
 * const normalized = normalizeToolOutput({ json: { ok: true } });
 * if (normalized.ok) normalized.output.text; // '{"ok":true}'
 * ```
 */
export function normalizeToolOutput(output: unknown): Normalization {
  if (typeof output !== "object" || output === null) return invalid("RESULT_INVALID", NOT_AN_OUTPUT);
  let json: unknown;
  let images: unknown;
  let reading = "json";
  try {
    json = (output as ToolOutput).json;
    reading = "images";
    images = (output as ToolOutput).images;
  } catch (error) {
    return invalid("RESULT_INVALID", `reading the result's ${reading} threw ${describeThrown(error)}`);
  }
  if (json === undefined) return invalid("RESULT_INVALID", NOT_AN_OUTPUT);
  const walk: Walk = { ancestors: [], nodes: 0, chars: 0, problem: undefined, trail: [], maxNodes: MAX_NODES };
  const copy = copyJson(json, walk, 0);
  if (walk.nodes > MAX_NODES) {
    return breach("resultBytes", walk.nodes, MAX_NODES, `result has over ${MAX_NODES} JSON values; the limit is ${LIMITS.resultBytes} bytes`);
  }
  if (walk.problem !== undefined) return invalid("RESULT_NOT_JSON", `result is not JSON: ${where(walk.trail.reverse())} ${walk.problem}`);
  if (walk.chars > MAX_CHARS) {
    return breach(
      "resultBytes",
      walk.chars,
      LIMITS.resultBytes,
      `result has ${walk.chars} characters in its strings and keys alone; the limit is ${LIMITS.resultBytes} bytes of JSON`,
    );
  }
  // The copy is plain data within MAX_NODES and MAX_CHARS: serializing it cannot throw.
  const serialized = JSON.stringify(copy);
  const bytes = utf8Bytes(serialized);
  if (bytes > LIMITS.resultBytes) {
    return breach("resultBytes", bytes, LIMITS.resultBytes, `result is ${bytes} bytes of JSON; the limit is ${LIMITS.resultBytes}`);
  }
  const copiedImages: ToolImage[] = [];
  if (images !== undefined) {
    const imageProblem = copyImages(images, copiedImages);
    if (imageProblem) return imageProblem;
  }
  const text = typeof copy === "string" ? copy : serialized;
  return { ok: true, output: { json: copy as JsonValue, text, bytes, images: copiedImages } };
}

const NOT_AN_OUTPUT = "a tool must resolve with a ToolOutput ({ json, images? }) or a ToolError";

/** Copies the images into `copies`, or says why they are refused. */
function copyImages(images: unknown, copies: ToolImage[]): Normalization | undefined {
  let count: unknown;
  try {
    if (!Array.isArray(images)) return invalid("RESULT_INVALID", "images must be an array of ToolImage");
    count = images.length;
  } catch (error) {
    return invalid("RESULT_INVALID", `reading the result's images threw ${describeThrown(error)}`);
  }
  // Only a Proxy answers otherwise; an object here would run its `valueOf` in each comparison.
  if (typeof count !== "number") return invalid("RESULT_INVALID", `images is an array whose length is ${typeWords(count)}`);
  if (count > LIMITS.imagesPerCall) {
    return breach("imagesPerCall", count, LIMITS.imagesPerCall, `${count} images; the limit is ${LIMITS.imagesPerCall}`);
  }
  for (let index = 0; index < count; index++) {
    const copied = copyImage(images as readonly unknown[], index);
    if ("ok" in copied) return copied;
    copies.push(copied);
  }
  return undefined;
}

// The intrinsic accessors of typed arrays, taken once: called on a value, they read its
// internal slots, so neither a Proxy, nor an own `byteLength` getter, nor a swapped
// prototype can pass for image bytes or lie about their size.
const typedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype) as object;
const typedArrayKind = Object.getOwnPropertyDescriptor(typedArrayPrototype, Symbol.toStringTag)!.get!;
const typedArrayByteLength = Object.getOwnPropertyDescriptor(typedArrayPrototype, "byteLength")!.get!;

/**
 * Copies one image into a fresh `ToolImage` (T4), reading each field of the tool's once,
 * and checks the copy: the bytes are copied out of the tool's buffer, so neither a getter
 * nor the consent recheck (kept, called on the tool's image) can swap them or their type
 * after the checks.
 */
function copyImage(images: readonly unknown[], index: number): ToolImage | Normalization {
  let image: unknown;
  let data: unknown;
  let mimeType: unknown;
  let description: unknown;
  let recheckConsent: unknown;
  try {
    image = images[index];
    if (typeof image !== "object" || image === null) {
      return invalid("RESULT_INVALID", `images[${index}] must be a ToolImage ({ mimeType, data })`);
    }
    const fields = image as ToolImage;
    data = fields.data;
    mimeType = fields.mimeType;
    description = fields.description;
    recheckConsent = fields.recheckConsent;
  } catch (error) {
    return invalid("RESULT_INVALID", `images[${index}] could not be read (${describeThrown(error)})`);
  }
  if (typedArrayKind.call(data) !== "Uint8Array") {
    return invalid("RESULT_INVALID", `images[${index}].data must be a Uint8Array of image bytes (never base64 text)`);
  }
  if (typeof mimeType !== "string" || !IMAGE_MIME_TYPES.includes(mimeType)) {
    const shown = typeof mimeType === "string" ? JSON.stringify(mimeType.slice(0, 100)) : typeWords(mimeType);
    return breach("imageMimeType", 0, 0, `images[${index}] has type ${shown}; allowed: ${IMAGE_MIME_TYPES.join(", ")}`);
  }
  const byteLength = typedArrayByteLength.call(data) as number;
  if (byteLength > LIMITS.imageBytes) {
    return breach("imageBytes", byteLength, LIMITS.imageBytes, `images[${index}] is ${byteLength} bytes; the limit is ${LIMITS.imageBytes}`);
  }
  if (description !== undefined && typeof description !== "string") {
    return invalid("RESULT_INVALID", `images[${index}].description must be a string, not ${typeWords(description)}`);
  }
  if (recheckConsent !== undefined && typeof recheckConsent !== "function") {
    return invalid("RESULT_INVALID", `images[${index}].recheckConsent must be a function, not ${typeWords(recheckConsent)}`);
  }
  const bytes = new Uint8Array(byteLength);
  try {
    // `set` from a real Uint8Array reads its internal slots: no tool code runs here. It
    // throws only for a buffer the tool detached (transferred away).
    bytes.set(data as Uint8Array);
  } catch (error) {
    return invalid("RESULT_INVALID", `images[${index}].data could not be copied (${describeThrown(error)})`);
  }
  const copy: { mimeType: string; data: Uint8Array; description?: string; recheckConsent?: ToolImage["recheckConsent"] } = { mimeType, data: bytes };
  if (description !== undefined) copy.description = description;
  if (recheckConsent !== undefined) {
    // Not `bind`: binding reads the function's `name` and `length`, which may be getters.
    const recheck = recheckConsent as () => boolean | Promise<boolean>;
    copy.recheckConsent = () => Reflect.apply(recheck, image, []) as boolean | Promise<boolean>;
  }
  return copy;
}

const TOO_MANY = "is one value too many";

/** What {@link copyPlainJson} made of a value: a plain copy, or what is wrong with it and where. */
export type PlainJsonCopy =
  | { readonly ok: true; readonly value: JsonValue; readonly characters: number }
  | {
      readonly ok: false;
      /** What is wrong (`is a Map, not a plain object`), at {@link path}. */
      readonly problem: string;
      /** The keys from the root to the value at fault. */
      readonly path: readonly string[];
      /** More than `maxNodes` values. */
      readonly tooLarge: boolean;
      /** Objects or arrays nested deeper than results may be. */
      readonly tooDeep: boolean;
    };

/**
 * A plain copy of a value under the rules a result's `json` follows (strict JSON: no
 * `Map`, `Set`, `Date` or other class instance, function, `undefined`, BigInt, `NaN`,
 * cycle; each value read once), for the other values a tool hands the call boundary
 * (progress `data`). `depth` is how deep the value already sits: an object in it may
 * nest to 128 levels from the top. `characters` counts those of its strings and keys,
 * a lower bound of its JSON's bytes. Never throws.
 *
 * @example
 * ```ts
 * copyPlainJson({ seen: new Set([1]) }, 1_000, 1); // { ok: false, problem: "is a Set, not a plain object", path: ["seen"], … }
 * ```
 */
export function copyPlainJson(value: unknown, maxNodes: number, depth: number): PlainJsonCopy {
  const walk: Walk = { ancestors: [], nodes: 0, chars: 0, problem: undefined, trail: [], maxNodes };
  const copy = copyJson(value, walk, depth);
  if (walk.problem === undefined) return { ok: true, value: copy as JsonValue, characters: walk.chars };
  return {
    ok: false,
    problem: walk.problem,
    path: walk.trail.reverse(),
    tooLarge: walk.problem === TOO_MANY,
    tooDeep: walk.problem.startsWith("nests deeper"),
  };
}

/** Where a value is, for messages: "the result" or `at /a/0/b`. */
function where(path: readonly string[]): string {
  return path.length === 0 ? "the result" : `at /${path.join("/")}`;
}

/**
 * Returns a plain copy of `value` if it is strict JSON, reading each of its values once;
 * otherwise sets `walk.problem` and returns nothing useful. A read that throws (a getter,
 * a Proxy trap) is a problem too. Where the problem is gets known only as the walk
 * unwinds (`walk.trail`): keeping a path on the way down costs a push and a pop a value.
 */
function copyJson(value: unknown, walk: Walk, depth: number): unknown {
  if (++walk.nodes > walk.maxNodes) return refuse(walk, TOO_MANY);
  switch (typeof value) {
    case "string":
      walk.chars += value.length;
      return value;
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : refuse(walk, `is ${value}`);
    case "object":
      break;
    default:
      return refuse(walk, `is ${typeWords(value)}`);
  }
  if (value === null) return null;
  const { ancestors } = walk;
  if (depth > MAX_DEPTH) return refuse(walk, `nests deeper than ${MAX_DEPTH} levels`);
  if (ancestors.includes(value)) return refuse(walk, "is a cycle");
  ancestors.push(value);
  // What is being read, for a read that throws: an index or key of a child, or -1 for the
  // value itself (its prototype, keys or length).
  let reading: number | string = -1;
  try {
    if (Array.isArray(value)) {
      const length: unknown = value.length;
      // Only a Proxy can answer otherwise, and a length that is an object would run its
      // `valueOf` on every comparison below.
      if (typeof length !== "number") return refuse(walk, `is an array whose length is ${typeWords(length)}`);
      const copy: unknown[] = [];
      for (let index = 0; index < length; index++) {
        reading = index;
        const item = copyJson(value[index], walk, depth + 1);
        if (walk.problem !== undefined) return unwind(walk, String(index));
        copy.push(item);
      }
      ancestors.pop();
      return copy;
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      return refuse(walk, `is a ${className(prototype)}, not a plain object`);
    }
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      reading = key;
      walk.chars += key.length;
      const item = copyJson((value as Record<string, unknown>)[key], walk, depth + 1);
      if (walk.problem !== undefined) return unwind(walk, key);
      // An own "__proto__" key (JSON.parse makes them) would set the copy's prototype.
      if (key === "__proto__") Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
      else copy[key] = item;
    }
    ancestors.pop();
    return copy;
  } catch (error) {
    // Only reads in this frame land here: a child catches its own.
    refuse(walk, `could not be read (${describeThrown(error)})`);
    return reading === -1 ? undefined : unwind(walk, String(reading));
  }
}

function refuse(walk: Walk, problem: string): undefined {
  walk.problem = problem;
  return undefined;
}

function unwind(walk: Walk, key: string): undefined {
  walk.trail.push(key);
  return undefined;
}

/** The class name of a prototype, for a message; reading it must not throw either. */
function className(prototype: object): string {
  try {
    const name: unknown = (prototype as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === "string" && name.length > 0 && name.length <= 100) return name;
  } catch {
    // A throwing `constructor` getter: the generic wording below says enough.
  }
  return "class instance";
}

function breach(limit: LimitBreach["limit"], actual: number, max: number, message: string): Normalization {
  return { ok: false, breach: { limit, actual, max, message } };
}

function invalid(code: string, message: string): Normalization {
  return { ok: false, invalid: { code, message } };
}

/** Cuts a `ToolError` message to `LIMITS.errorMessageBytes`, marking the cut. */
export function boundErrorMessage(message: string): string {
  // Every character is at least a byte: a longer string is over without measuring it all
  // (a tool may throw an Error with megabytes of message).
  if (message.length <= LIMITS.errorMessageBytes && utf8Bytes(message) <= LIMITS.errorMessageBytes) return message;
  let cut = message.slice(0, LIMITS.errorMessageBytes);
  while (utf8Bytes(cut) > LIMITS.errorMessageBytes - 16) cut = cut.slice(0, Math.floor(cut.length * 0.9));
  return `${cut}… (truncated)`;
}
