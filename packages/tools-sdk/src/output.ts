import type { JsonValue } from "./json.js";

/**
 * An ephemeral image (T4): held in memory only for delivery to the model, never
 * written to the journal (only its digest is), never base64 inside JSON or text.
 * The runtime copies it (fields read once, bytes copied) when the call returns: what it
 * checked is what it delivers, whatever the object or its buffer become afterwards.
 */
export interface ToolImage {
  /** One of `IMAGE_MIME_TYPES`: png, jpeg, gif or webp. */
  readonly mimeType: string;
  /** The raw bytes, at most `LIMITS.imageBytes`. */
  readonly data: Uint8Array;
  /** Short alt text the model sees beside the image (and instead of it, if withheld). */
  readonly description?: string;
  /**
   * Rechecks the user's consent right before the image is delivered to the model.
   * Return `false` (or throw) and the image is withheld and the model told so.
   * Omit it only for images that need no consent (a chart the tool drew itself).
   */
  readonly recheckConsent?: () => boolean | Promise<boolean>;
}

/**
 * The result of a successful call (T3): structured JSON, plus optional ephemeral
 * images (T4). The runtime derives the text the model pipeline needs; do not
 * pre-format text for the model.
 *
 * @example
 * ```ts
 * return { json: { results: [{ title: "OpenWorker", url: "https://example.com" }] } };
 * ```
 */
export interface ToolOutput {
  /**
   * The structured result: plain JSON data (objects, arrays, strings, finite numbers,
   * booleans, null), at most 256 KB once serialized (E3). Typed loosely so interfaces
   * describing your result are accepted; the runtime checks it strictly and refuses a
   * non-JSON value (`RESULT_NOT_JSON`: BigInt, cycles, class instances, functions).
   */
  readonly json: JsonValue | object;
  /** Ephemeral images, at most `LIMITS.imagesPerCall`. */
  readonly images?: readonly ToolImage[];
}

/**
 * Builds a {@link ToolOutput}.
 *
 * @example
 * ```ts
 * return toolOutput({ text: "HELLO" });
 * ```
 */
export function toolOutput(json: JsonValue | object, images?: readonly ToolImage[]): ToolOutput {
  return images === undefined ? { json } : { json, images };
}
