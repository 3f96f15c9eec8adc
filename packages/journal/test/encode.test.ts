import { canonicalJson } from "@openworker/tools-sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CanonicalText, encodeRecord } from "../src/records/encode.js";

// The chain hashes a record's text (A3, verify()): it must be exactly canonicalJson of
// the record, whatever the values and however its keys were ordered.
const text = fc.oneof(fc.string({ unit: "binary" }), fc.string(), fc.constantFrom("", '"', "\\", "\u2028", "\ud800", "a\u0000b", "é"));
const value = fc.option(fc.oneof(fc.jsonValue(), text), { nil: undefined });

describe("the record encoder (A3)", () => {
  it("A3 encodes any record as canonicalJson does, its keys in order or not, values nested or absent", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(text, fc.constantFrom("at", "kind", "seq", "sessionId")), value), (record) => {
        expect(encodeRecord(record)).toBe(canonicalJson(record));
        const sorted = Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
        expect(encodeRecord(sorted)).toBe(canonicalJson(record));
      }),
    );
  });

  it("A3 arguments canonicalized once are written as they are", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (args) => {
        const record = { alias: "a", args: new CanonicalText(canonicalJson(args)), kind: "call_requested", seq: 2 };
        expect(encodeRecord(record)).toBe(canonicalJson({ alias: "a", args, kind: "call_requested", seq: 2 }));
      }),
    );
  });

  it("A3 encodes a record with a __proto__ key as canonicalJson does", () => {
    const record = JSON.parse('{"__proto__":"x","kind":"call_progress","seq":3}') as Record<string, unknown>;
    expect(encodeRecord(record)).toBe(canonicalJson(record));
    expect(encodeRecord(record)).toContain('"__proto__":"x"');
  });
});
