/**
 * What was thrown, as text for a message, read defensively: a value from a host's or a
 * tool's code may have a `message` getter that throws too. Never throws.
 */
export function messageOf(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    return "an error that could not be described";
  }
}

/** `text` cut to `max` characters with a marker: what is journaled or quoted back stays bounded. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
