import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseServersFile } from "../src/index.js";
import { findDuplicateJsonKey } from "../src/internal.js";
import { thrown } from "./helpers.js";

describe("findDuplicateJsonKey", () => {
  it.each([
    ['{"a":1,"a":2}', { path: "", key: "a" }],
    ['{"servers":{"acer":{},"acer":{}}}', { path: "servers", key: "acer" }],
    ['{"x":[{"k":1},{"k":1,"k":2}]}', { path: "x[1]", key: "k" }],
    ['{"a\\"b":1,"a\\u0022b":2}', { path: "", key: 'a"b' }],
  ])("finds the repeated key in %s", (text, expected) => {
    expect(findDuplicateJsonKey(text)).toEqual(expected);
  });

  it.each([['{"a":"a","b":{"a":1}}'], ['[{"a":1},{"a":1}]'], ['{"a":["a","a"]}'], ['"{\\"a\\":1,\\"a\\":1}"']])("accepts %s", (text) => {
    expect(findDuplicateJsonKey(text)).toBeUndefined();
  });

  it("finds nothing in any JSON.stringify output, and finds a key repeated at the root of any object", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 2), (value, indent) => {
        expect(findDuplicateJsonKey(JSON.stringify(value, null, indent))).toBeUndefined();
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), (object) => {
        const key = Object.keys(object)[0]!;
        const text = `{${JSON.stringify(key)}:null,${JSON.stringify(object).slice(1)}`;
        expect(findDuplicateJsonKey(text)).toEqual({ path: "", key });
      }),
      { numRuns: 300 },
    );
  });

  it("N5 a servers file naming one namespace twice fails instead of keeping the last entry", () => {
    const text = '{"servers":{"acer":{"transport":"stdio","command":"a"},"acer":{"transport":"stdio","command":"b"}}}';
    const error = thrown(() => parseServersFile(text, "servers.json"));
    expect(error.code).toBe("DUPLICATE_PROVIDER");
    expect(error.message).toContain('server "acer" appears twice in "servers"');
    expect(thrown(() => parseServersFile('{"servers":{},"servers":{}}', "servers.json")).code).toBe("SERVERS_FILE_INVALID");
  });
});
