/**
 * A stored record's export line: its stored text with `hash` and `prevHash` spliced in at
 * their sorted places among the top-level keys. The writer stores each record's content as
 * canonical JSON (keys sorted, values as `canonicalJson` writes them), so the splice is the
 * canonical JSON of the whole record, byte for byte, without parsing and re-serializing
 * it: about half the time of a record's export (10.6 → 4.9 µs measured). Only the top
 * level is checked: nested values are taken as stored, which for text the writer wrote is
 * canonical already. `undefined` when the text is not what the writer writes
 * (keys out of order, a key with an escape, a `hash` key of its own): the caller then
 * canonicalizes the parsed record as before.
 */
export function exportLine(data: string, prevHash: string, hash: string): string | undefined {
  if (data.charCodeAt(0) !== OPEN_BRACE || data.charCodeAt(data.length - 1) !== CLOSE_BRACE) return undefined;
  let hashAt = -1;
  let prevHashAt = -1;
  let previous: string | undefined;
  let at = 1;
  if (data.length > 2) {
    for (;;) {
      if (data.charCodeAt(at) !== QUOTE) return undefined;
      const end = data.indexOf('"', at + 1);
      if (end < 0) return undefined;
      const key = data.slice(at + 1, end);
      if (key.includes("\\") || (previous !== undefined && key <= previous) || key === "hash" || key === "prevHash") return undefined;
      if (hashAt < 0 && key > "hash") hashAt = at;
      if (prevHashAt < 0 && key > "prevHash") prevHashAt = at;
      previous = key;
      if (data.charCodeAt(end + 1) !== COLON) return undefined;
      const next = skipValue(data, end + 2);
      if (next < 0) return undefined;
      if (next === data.length - 1) break;
      if (data.charCodeAt(next) !== COMMA) return undefined;
      at = next + 1;
    }
  }
  const close = data.length - 1;
  if (hashAt < 0) hashAt = close;
  if (prevHashAt < 0) prevHashAt = close;
  const hashField = `"hash":${JSON.stringify(hash)}`;
  const prevField = `"prevHash":${JSON.stringify(prevHash)}`;
  // Each field is followed by a comma unless it lands before the closing brace, where a
  // comma goes before it instead (when the object has keys before it).
  const insert = (field: string, position: number): string => (position === close ? (close > 1 ? `,${field}` : field) : `${field},`);
  if (hashAt === prevHashAt) {
    const both = hashAt === close ? (close > 1 ? `,${hashField},${prevField}` : `${hashField},${prevField}`) : `${hashField},${prevField},`;
    return data.slice(0, hashAt) + both + data.slice(hashAt);
  }
  return data.slice(0, hashAt) + insert(hashField, hashAt) + data.slice(hashAt, prevHashAt) + insert(prevField, prevHashAt) + data.slice(prevHashAt);
}

/** The index just past the JSON value starting at `at`, or -1 when it is not one the writer writes. */
function skipValue(data: string, at: number): number {
  let depth = 0;
  let index = at;
  while (index < data.length) {
    const code = data.charCodeAt(index);
    if (code === QUOTE) {
      // A string: to its closing quote, past escaped characters.
      index += 1;
      for (;;) {
        const quote = data.indexOf('"', index);
        if (quote < 0) return -1;
        let backslashes = 0;
        for (let back = quote - 1; data.charCodeAt(back) === BACKSLASH; back -= 1) backslashes += 1;
        index = quote + 1;
        if (backslashes % 2 === 0) break;
      }
      if (depth === 0) return index;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) depth += 1;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (depth === 0) return index; // the end of a number or literal, at the record's close
      depth -= 1;
      index += 1;
      if (depth === 0) return index;
      continue;
    } else if (code === COMMA && depth === 0) return index;
    index += 1;
  }
  return -1;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
