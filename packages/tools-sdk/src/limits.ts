/**
 * The hard limits the runtime enforces on every native call (seed 000, SPEC E1–E3, L1, T4).
 * The testing kit applies the same numbers, so a partner meets a breach in a unit test,
 * not in production.
 *
 * @example
 * ```ts
 * if (bytes > LIMITS.resultBytes) return toolError("TOO_BIG", "narrow the query");
 * ```
 */
export const LIMITS = Object.freeze({
  /** E1: a native call is bounded to 75 s. */
  callTimeoutMs: 75_000,
  /** E2: at most 64 progress events per call. */
  progressEvents: 64,
  /** E2: at most 4 KB (UTF-8 bytes) per progress message. */
  progressMessageBytes: 4 * 1024,
  /** E2: at most 16 KB of progress JSON per call. */
  progressJsonBytes: 16 * 1024,
  /** E3: the normalized result is at most 256 KB of JSON. */
  resultBytes: 256 * 1024,
  /** L1: `modelContext` facts, per tool. */
  modelContextToolBytes: 4 * 1024,
  /** L1: `modelContext` facts, all tools of an attempt together. */
  modelContextTotalBytes: 16 * 1024,
  /** N4: a qualified name and its model alias each fit 80 ASCII bytes. */
  nameBytes: 80,
  /** T4: ephemeral images per call. */
  imagesPerCall: 8,
  /** T4: bytes of one ephemeral image. */
  imageBytes: 5 * 1024 * 1024,
  /** A `ToolError` message longer than this is cut, with a marker, before the model sees it. */
  errorMessageBytes: 4 * 1024,
});

/** The type of {@link LIMITS}. */
export type Limits = typeof LIMITS;

/** MIME types accepted for ephemeral images (T4). */
export const IMAGE_MIME_TYPES: readonly string[] = Object.freeze(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** UTF-8 byte length of a string (the unit every byte limit is measured in), without allocating. */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
