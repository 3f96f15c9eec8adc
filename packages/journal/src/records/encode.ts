import { canonicalJson } from "@openworker/tools-sdk";
import type { RecordContent } from "./records.js";

/** A value already in canonical JSON (a call's arguments, canonicalized once for their digest). */
export class CanonicalText {
  constructor(readonly text: string) {}
}

/**
 * The one encoder of a record: canonical JSON of its content (keys sorted, no whitespace, absent optional fields left out), exactly
 * `canonicalJson(content)`.
 */
export function encodeRecord(content: RecordContent | Readonly<Record<string, unknown>>): string {
  let text = "{";
  let previous = "";
  const fields = content as Readonly<Record<string, unknown>>;
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined) continue;
    if (key <= previous) return canonicalJson(content);
    previous = key;
    const json =
      typeof value === "string"
        ? jsonString(value)
        : value instanceof CanonicalText
          ? value.text
          : typeof value === "object" && value !== null
            ? canonicalJson(value)
            : (JSON.stringify(value) as string | undefined);
    if (json === undefined) continue;
    text += `${text.length === 1 ? "" : ","}${jsonString(key)}:${json}`;
  }
  return `${text}}`;
}

// oxlint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON writes it, quotes included. */
export function jsonString(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}
