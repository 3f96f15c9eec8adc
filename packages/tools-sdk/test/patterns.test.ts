import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OpenWorkerError } from "../src/index.js";
import { compileInputSchema } from "../src/validation/index.js";

// Schema patterns run on RE2 (linear time), never on JavaScript's backtracking RegExp:
// MCP servers publish the schemas, the model writes the arguments (E5, E1).

function withPattern(pattern: string, tool = "example.patterns") {
  return compileInputSchema({ type: "object", properties: { q: { type: "string", pattern } } }, tool);
}

describe("schema patterns (RE2)", () => {
  it("E5 E1 a catastrophic pattern (^(a+)+$) checks a 100,000-character hostile argument and returns", () => {
    const validator = withPattern("^(a+)+$", "evil.search");
    const hostile = `${"a".repeat(100_000)}!`;
    expect(validator.check({ q: hostile }).ok).toBe(false);
    expect(validator.check({ q: "a".repeat(100_000) }).ok).toBe(true);
    // The same through patternProperties and propertyNames, which ajv compiles the same way.
    const keys = compileInputSchema(
      { type: "object", patternProperties: { "^(b+)+$": { type: "number" } }, propertyNames: { pattern: "^(c|b+)+$" } },
      "evil.keys",
    );
    expect(keys.check({ [`${"b".repeat(50_000)}`]: "not a number" }).ok).toBe(false);
    expect(keys.check({ [`${"b".repeat(50_000)}!`]: 1 }).ok).toBe(false);
  }, 10_000);

  it("E5 B5 a lookahead or a backreference is refused as SCHEMA_INVALID naming the tool and the pattern", () => {
    for (const pattern of ["^(?=.*\\d)\\w+$", "^(?!admin)\\w+$", "(?<=@)\\w+", "^(a)\\1$", "^(?<x>a)\\k<x>$"]) {
      let thrown: unknown;
      try {
        withPattern(pattern, "acer.lookup");
      } catch (error) {
        thrown = error;
      }
      expect(OpenWorkerError.hasCode(thrown, "SCHEMA_INVALID"), pattern).toBe(true);
      const message = (thrown as Error).message;
      expect(message).toContain('"acer.lookup"');
      expect(message).toContain(JSON.stringify(pattern));
      expect(message).toContain("cannot be checked in linear time");
      expect(message).toMatch(/lookaround|backreference/);
    }
    // A pattern that is not ECMA-262 at all stays "not valid JSON Schema", as before.
    expect(() => withPattern("^(a$", "acer.broken")).toThrow(/not valid JSON Schema/);
  });

  it("E5 ordinary patterns accept and refuse as ECMA-262 reads them", () => {
    const cases: [string, string, boolean][] = [
      ["^[a-z]+$", "hello", true],
      ["^[a-z]+$", "Hello", false],
      ["\\d{4}-\\d{2}", "on 2024-06", true],
      ["\\d{4}-\\d{2}", "2024/06", false],
      ["^\\p{L}+$", "héllo", true],
      ["^\\p{L}+$", "hello1", false],
      ["^\\p{Lu}", "Ärger", true],
      // Rewritten where RE2 reads the same text otherwise: \s and . as ECMA-262 defines them,
      // \uD83D\uDE00 as one code point, \p{Script=…}, a "[" inside a class, [\b].
      ["^\\s$", "\u00a0", true],
      ["^\\S$", "\u2028", false],
      ["^.$", "\r", false],
      ["^.$", "😀", true],
      ["^\\uD83D\\uDE00$", "😀", true],
      ["^\\u00e9$", "é", true],
      ["^\\p{Script=Greek}+$", "αβγ", true],
      ["^\\p{sc=Greek}+$", "abc", false],
      ["^[[:a]+$", ":[a", true],
      ["^[\\b]$", "\b", true],
      ["^(?<year>\\d{4})$", "2024", true],
      ["^[^]$", "x", true],
    ];
    for (const [pattern, text, expected] of cases) {
      expect(withPattern(pattern).check({ q: text }).ok, `${pattern} on ${JSON.stringify(text)}`).toBe(expected);
      expect(new RegExp(pattern, "u").test(text), `ECMA-262 agrees: ${pattern}`).toBe(expected);
    }
  });
});

describe("schema patterns in the built SDK (what hosts load)", () => {
  it("E5 B5 the built validation entry refuses syntax ECMA-262 refuses, RE2-only syntax included: no pattern takes RE2's meaning", async () => {
    const built = new URL("../dist/internal/validation.js", import.meta.url);
    expect(existsSync(built), "build the SDK first (pnpm turbo run build)").toBe(true);
    const { compileInputSchema: compileBuilt } = (await import(built.href)) as typeof import("../src/validation/index.js");
    // `(?i)` would make the check case-insensitive, `\z` and `\Q…\E` are RE2's anchors and quoting, `{,2}` RE2's short count.
    for (const pattern of ["^(?i)admin$", "^a\\z", "^\\Q.*\\E$", "^a{,2}$", "^(a$"]) {
      expect(() => compileBuilt({ type: "object", properties: { name: { type: "string", pattern } } }, "acer.lookup"), pattern).toThrow(
        /not valid JSON Schema/,
      );
    }
    expect(compileBuilt({ type: "object", properties: { name: { type: "string", pattern: "^[a-z]+$" } } }, "acer.lookup").check({ name: "ADMIN" }).ok).toBe(
      false,
    );
  });
});
