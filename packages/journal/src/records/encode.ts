import { canonicalJson } from "@openworker/tools-sdk";
import type { RecordContent } from "./records.js";

/**
 * The one encoder of a record: canonical JSON of its content (keys sorted, no
 * whitespace, absent optional fields left out). The chain hash covers exactly this text.
 */
export function encodeRecord(content: RecordContent | Readonly<Record<string, unknown>>): string {
  return canonicalJson(content);
}

// oxlint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON writes it, quotes included. */
export function jsonString(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}
