import { canonicalJson } from "@openworker/tools-sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exportLine } from "../src/export-line.js";

// `journal export` splices the chain fields into each stored text instead of parsing and
// re-serializing it: the line must be canonicalJson of the whole record, byte for byte,
// whatever the content, or an exported chain would not re-hash to what verify() checks.

const HASH = "a".repeat(64);
const PREV = "0".repeat(64);
/** Top-level keys as records have them, and any others (quotes, non-ASCII, near "hash"). */
const key = fc.oneof(
  fc.constantFrom("at", "alias", "args", "argsDigest", "by", "callId", "code", "event", "image", "kind", "message", "outcome", "prev", "prevHashes", "result", "seq", "sessionId", "who"),
  fc.string().filter((name) => name !== "hash" && name !== "prevHash"),
);
const content = fc.dictionary(key, fc.jsonValue(), { maxKeys: 12 });

describe("export lines", () => {
  it("A3 the spliced line is canonicalJson of the record with hash and prevHash, for any canonical content", () => {
    fc.assert(
      fc.property(content, (record) => {
        const data = canonicalJson(record);
        const line = exportLine(data, PREV, HASH);
        const expected = canonicalJson({ ...JSON.parse(data), prevHash: PREV, hash: HASH });
        // A key written with an escape, or an integer key (ordered apart), falls back to the old path
        // (undefined); every other line is exact.
        return line === undefined ? Object.keys(record).some((name) => JSON.stringify(name) !== `"${name}"` || /^\d+$/.test(name)) : line === expected;
      }),
      { numRuns: 3000 },
    );
  });

  it("A3 an empty record and records whose keys all sort before or after the chain fields", () => {
    expect(exportLine("{}", PREV, HASH)).toBe(`{"hash":"${HASH}","prevHash":"${PREV}"}`);
    expect(exportLine('{"a":1}', PREV, HASH)).toBe(`{"a":1,"hash":"${HASH}","prevHash":"${PREV}"}`);
    expect(exportLine('{"z":[1,{"b":"}"}]}', PREV, HASH)).toBe(`{"hash":"${HASH}","prevHash":"${PREV}","z":[1,{"b":"}"}]}`);
    expect(exportLine('{"kind":"x","seq":2}', PREV, HASH)).toBe(`{"hash":"${HASH}","kind":"x","prevHash":"${PREV}","seq":2}`);
  });

  it("text the writer would not write is left to the old path", () => {
    expect(exportLine('{"b":1,"a":2}', PREV, HASH)).toBeUndefined();
    expect(exportLine('{"hash":"x"}', PREV, HASH)).toBeUndefined();
    expect(exportLine("[1]", PREV, HASH)).toBeUndefined();
    expect(exportLine('{"a":"unterminated}', PREV, HASH)).toBeUndefined();
  });
});
