import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseServersFile } from "../src/index.js";
import { jsonSyntaxProblem } from "../src/internal.js";
import { firstSyntaxError } from "../src/json-syntax.js";
import { thrown } from "./helpers.js";

const problemOf = (text: string): string => {
  try {
    JSON.parse(text);
  } catch (error) {
    return jsonSyntaxProblem(text, error);
  }
  throw new Error(`${text} is valid JSON`);
};

describe("jsonSyntaxProblem (E6: a config file's text is never quoted in an error)", () => {
  it.each([
    ['{"env":{"TOKEN":\'sk-live-SECRET-123\'}}', "line 1, column 17: unexpected character"],
    ['{\n  "headers": {\n    "Authorization": Bearer SECRET-TOKEN-123\n  }\n}', "line 3, column 22: unexpected character"],
    ['{"a":tru}', "line 1, column 9: unexpected character"],
    ['{"a":1,}', "line 1, column 8: expected double-quoted property name"],
    ['{"a":1', "line 1, column 7: expected ',' or '}' after property value"],
    ['{"a":"abc', "line 1, column 10: unterminated string"],
    ["", "the file is empty; it must hold one JSON value"],
    ["nul", "line 1, column 4: the text ends before the JSON value does"],
  ])("%j → %s", (text, expected) => {
    expect(problemOf(text)).toBe(expected);
  });

  it("E6 never repeats a secret-looking value from the text", () => {
    const secret = "sk-live-0123456789abcdef";
    for (const text of [`{"env":{"TOKEN":'${secret}'}}`, `{"env":{"TOKEN":${secret}}}`, `{"url":"http://x",${secret}}`, `[${secret}]`]) {
      const problem = problemOf(text);
      expect(problem).not.toContain("sk-live");
      expect(problem).not.toContain("0123");
    }
  });

  it("parseServersFile names the line and column and no part of the value", () => {
    const text = '{"servers":{"acer":{"transport":"stdio","command":"acer","env":{"TOKEN":\'sk-live-S3CRET\'}}}}';
    const error = thrown(() => parseServersFile(text, "/app/servers.json"));
    expect(error.code).toBe("SERVERS_FILE_INVALID_JSON");
    expect(error.message).toBe("/app/servers.json: not valid JSON, line 1, column 73: unexpected character");
    expect(error.message).not.toContain("S3CRET");
  });

  it("finds a break exactly where JSON.parse refuses, and none where it accepts (property)", () => {
    const json = fc.json({ depthSize: "small" });
    const mutated = fc
      .tuple(json, fc.nat(), fc.constantFrom("", "'", ",", "}", "]", "x", "\u0001", "\\", '"', " ", "-", "0", "e", "{", "[", ":"))
      .map(([text, at, insert]) => {
        const where = text.length === 0 ? 0 : at % (text.length + 1);
        return text.slice(0, where) + insert + text.slice(where + (at % 2));
      });
    fc.assert(
      fc.property(fc.oneof(json, mutated), (text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        const offset = firstSyntaxError(text);
        expect(offset === -1).toBe(valid);
        if (!valid) {
          // The text up to the break is a prefix of some valid JSON document's text: what
          // follows is the first character the grammar cannot take.
          expect(offset).toBeGreaterThanOrEqual(0);
          expect(offset).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("agrees with V8 on the position wherever V8 names one", () => {
    const cases = ['{"a":1,}', '{"a" 1}', '{"a":[1 2]}', '{"a":01}', '{"a":1} x', "{a:1}", '{"a":"x\u0001"}', '{"a":"\\q"}'];
    for (const text of cases) {
      let position = -1;
      try {
        JSON.parse(text);
      } catch (error) {
        position = Number(/at position (\d+)/.exec((error as Error).message)?.[1]);
      }
      expect({ text, offset: firstSyntaxError(text) }).toEqual({ text, offset: position });
    }
  });

  it("scans deep nesting without overflowing the stack", () => {
    const deep = `${"[".repeat(200_000)}1${"]".repeat(199_999)}`;
    expect(firstSyntaxError(deep)).toBe(deep.length);
  });
});
