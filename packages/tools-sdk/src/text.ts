/** `text` cut to `max` characters, the cut marked `…`: what a message quotes from its input stays bounded. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
