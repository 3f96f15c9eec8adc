import { canonicalJson } from "@openworker/tools-sdk";
import type { RecordContent } from "./records.js";

/** A value already in canonical JSON (a call's arguments, canonicalized once for their digest). */
export class CanonicalText {
  constructor(readonly text: string) {}
}
/** The one encoder of a record: canonical JSON of its content (keys sorted, no whitespace, absent optional fields left out), exactly `canonicalJson(content)`. */
export function encodeRecord(content: RecordContent | Readonly<Record<string, unknown>>): string {
  return encoderFor(Object.keys(content))(content as Readonly<Record<string, unknown>>);
}
/** `encodeRecord` for records with these keys (any order), made once per record kind: the key text is built once, and only nested values are sorted. */
export function encoderFor(keys: readonly string[]): (record: Readonly<Record<string, unknown>>) => string {
  // The order canonicalJson's sorted objects enumerate in: array-index keys first, then the others sorted.
  const sorted = Object.keys(Object.fromEntries([...keys].sort().map((key) => [key, 0])));
  const names = sorted.map((key) => `${jsonString(key)}:`);
  // A copy cannot hold a `__proto__` key (assigning it sets the prototype).
  const copyable = !sorted.includes("__proto__");
  return (record) => {
    // A flat record (no nested value: most of a call's) is copied in key order and stringified whole: V8's fast
    // path, which a replacer list would turn off (twice as slow).
    if (!copyable) return nested(record);
    const flat: Record<string, unknown> = {};
    for (const key of sorted) {
      const value = record[key];
      if (typeof value === "object" && value !== null) return nested(record);
      if (value !== undefined) flat[key] = value;
    }
    return JSON.stringify(flat);
  };
  function nested(record: Readonly<Record<string, unknown>>): string {
    let text = "{";
    for (let index = 0; index < sorted.length; index += 1) {
      const value = record[sorted[index]!];
      if (value === undefined) continue;
      const json =
        typeof value === "string"
          ? jsonString(value)
          : value instanceof CanonicalText
            ? value.text
            : typeof value === "object" && value !== null
              ? canonicalJson(value)
              : (JSON.stringify(value) as string | undefined);
      if (json === undefined) continue;
      text += text.length === 1 ? names[index] + json : `,${names[index]}${json}`;
    }
    return `${text}}`;
  }
}

// oxlint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON writes it, quotes included. */
export function jsonString(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}
