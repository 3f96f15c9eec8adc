import type { JsonValue } from "../json.js";
import { IMAGE_MIME_TYPES, LIMITS, utf8Bytes } from "../limits.js";
import type { ToolImage, ToolOutput } from "../output.js";
import type { CallError, LimitBreach, NormalizedOutput } from "./outcome.js";

/** Normalization either succeeds, breaks a limit (E3, T4), or finds a value that is not a valid result. */
export type Normalization =
  | { readonly ok: true; readonly output: NormalizedOutput }
  | { readonly ok: false; readonly breach: LimitBreach }
  | { readonly ok: false; readonly invalid: CallError };

const MAX_DEPTH = 128;
// Every JSON value takes at least two bytes serialized, so a result within the byte
// limit has fewer values than this; the bound stops a shared-reference bomb early.
const MAX_NODES = LIMITS.resultBytes / 2;

interface Walk {
  /**
   * The objects and arrays on the path to the value being checked, for cycles: a short
   * array (at most {@link MAX_DEPTH}), not a `Set`, which costs about a microsecond a
   * delete when filled and emptied item by item.
   */
  readonly ancestors: object[];
  nodes: number;
}

/**
 * Turns what a tool resolved with into the normalized result (T3, T4, E3): strict JSON
 * (no `BigInt`, cycles, functions, `undefined`, non-finite numbers or class instances),
 * at most 256 KB serialized, with the text the model sees derived here (a string result
 * is its own text, anything else is its JSON). Images are checked for count, size and
 * type. Oversized structured data is a breach, never silently truncated.
 *
 * @example
 * ```ts
 * const normalized = normalizeToolOutput({ json: { ok: true } });
 * if (normalized.ok) normalized.output.text; // '{"ok":true}'
 * ```
 */
export function normalizeToolOutput(output: unknown): Normalization {
  if (typeof output !== "object" || output === null || !("json" in output)) {
    return invalid("RESULT_INVALID", 'a tool must resolve with a ToolOutput ({ json, images? }) or a ToolError');
  }
  const { json, images } = output as ToolOutput;
  const walk: Walk = { ancestors: [], nodes: 0 };
  const problem = findNonJson(json, [], walk, 0);
  if (walk.nodes > MAX_NODES) {
    return breach("resultBytes", walk.nodes, MAX_NODES, `result has over ${MAX_NODES} JSON values; the limit is ${LIMITS.resultBytes} bytes`);
  }
  if (problem) return invalid("RESULT_NOT_JSON", `result is not JSON: ${problem}`);
  const serialized = JSON.stringify(json);
  const bytes = utf8Bytes(serialized);
  if (bytes > LIMITS.resultBytes) {
    return breach("resultBytes", bytes, LIMITS.resultBytes, `result is ${bytes} bytes of JSON; the limit is ${LIMITS.resultBytes}`);
  }
  const checkedImages = images === undefined ? [] : images;
  if (!Array.isArray(checkedImages)) return invalid("RESULT_INVALID", "images must be an array of ToolImage");
  if (checkedImages.length > LIMITS.imagesPerCall) {
    return breach("imagesPerCall", checkedImages.length, LIMITS.imagesPerCall, `${checkedImages.length} images; the limit is ${LIMITS.imagesPerCall}`);
  }
  for (const [index, image] of checkedImages.entries()) {
    const imageProblem = checkImage(image as ToolImage, index);
    if (imageProblem) return imageProblem;
  }
  const text = typeof json === "string" ? json : serialized;
  return { ok: true, output: { json: json as JsonValue, text, bytes, images: checkedImages } };
}

function checkImage(image: ToolImage, index: number): Normalization | undefined {
  if (typeof image !== "object" || image === null || !(image.data instanceof Uint8Array)) {
    return invalid("RESULT_INVALID", `images[${index}].data must be a Uint8Array of image bytes (never base64 text)`);
  }
  if (!IMAGE_MIME_TYPES.includes(image.mimeType)) {
    return breach("imageMimeType", 0, 0, `images[${index}] has type ${JSON.stringify(image.mimeType)}; allowed: ${IMAGE_MIME_TYPES.join(", ")}`);
  }
  if (image.data.byteLength > LIMITS.imageBytes) {
    return breach("imageBytes", image.data.byteLength, LIMITS.imageBytes, `images[${index}] is ${image.data.byteLength} bytes; the limit is ${LIMITS.imageBytes}`);
  }
  return undefined;
}

/** Where a value is, for messages: "the result" or `at /a/0/b`. */
function where(path: readonly string[]): string {
  return path.length === 0 ? "the result" : `at /${path.join("/")}`;
}

function findNonJson(value: unknown, path: string[], walk: Walk, depth: number): string | undefined {
  if (++walk.nodes > MAX_NODES) return "too large";
  const { ancestors } = walk;
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `${where(path)} is ${value}`;
    case "object":
      break;
    default:
      return `${where(path)} is a ${typeof value}`;
  }
  if (value === null) return undefined;
  if (depth > MAX_DEPTH) return `${where(path)} nests deeper than ${MAX_DEPTH} levels`;
  if (ancestors.includes(value)) return `${where(path)} is a cycle`;
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        path.push(String(index));
        const problem = findNonJson(value[index], path, walk, depth + 1);
        path.pop();
        if (problem) return problem;
      }
      return undefined;
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      return `${where(path)} is a ${(value as object).constructor?.name ?? "class instance"}, not a plain object`;
    }
    for (const key of Object.keys(value)) {
      path.push(key);
      const problem = findNonJson((value as Record<string, unknown>)[key], path, walk, depth + 1);
      path.pop();
      if (problem) return problem;
    }
    return undefined;
  } finally {
    ancestors.pop();
  }
}

function breach(limit: LimitBreach["limit"], actual: number, max: number, message: string): Normalization {
  return { ok: false, breach: { limit, actual, max, message } };
}

function invalid(code: string, message: string): Normalization {
  return { ok: false, invalid: { code, message } };
}

/** Cuts a `ToolError` message to `LIMITS.errorMessageBytes`, marking the cut. */
export function boundErrorMessage(message: string): string {
  if (utf8Bytes(message) <= LIMITS.errorMessageBytes) return message;
  let cut = message.slice(0, LIMITS.errorMessageBytes);
  while (utf8Bytes(cut) > LIMITS.errorMessageBytes - 16) cut = cut.slice(0, Math.floor(cut.length * 0.9));
  return `${cut}… (truncated)`;
}
