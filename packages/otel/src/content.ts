/** Characters of arguments or a result kept on a span when content is captured; the rest is clipped. */
export const DEFAULT_MAX_CONTENT_LENGTH = 8_192;

/**
 * Arguments or a result as a span attribute: their JSON text, clipped to `max` characters
 * with a note of the whole length. What it is given is already redacted by the runtime,
 * as the journal keeps it (E6); this only bounds its size.
 */
export function contentAttribute(value: unknown, max: number): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? "null";
  } catch {
    return "(not JSON)";
  }
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (clipped, ${text.length} characters)`;
}
