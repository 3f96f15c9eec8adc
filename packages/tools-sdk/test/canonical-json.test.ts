import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/index.js";

/** The first implementation (copy everything, then stringify): the oracle the fast one must match byte for byte. */
function reference(value: unknown): string {
  const sortKeys = (item: unknown, depth: number): unknown => {
    if (depth > 256) throw new RangeError("too deep");
    if (Array.isArray(item)) return item.map((entry) => sortKeys(entry, depth + 1));
    if (typeof item !== "object" || item === null) return item;
    // No prototype: an own "__proto__" key stays a key (see the test below).
    const out = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(item).sort()) {
      const entry = (item as Record<string, unknown>)[key];
      // Never through toJSON (the documented rule): the first implementation copied an own
      // toJSON function too, and JSON.stringify then serialized the copy through it.
      if (key === "toJSON" && typeof entry === "function") continue;
      out[key] = sortKeys(entry, depth + 1);
    }
    return out;
  };
  return JSON.stringify(sortKeys(value, 0));
}

describe("canonicalJson (the text every fingerprint and chain hash is taken over)", () => {
  it("A2 sorts keys at every depth and gives the same text for equal values", () => {
    expect(canonicalJson({ b: 1, a: [true, null, { d: 1, c: 2 }] })).toBe('{"a":[true,null,{"c":2,"d":1}],"b":1}');
    expect(canonicalJson({ a: 1, b: { c: 1 } })).toBe(canonicalJson({ b: { c: 1 }, a: 1 }));
  });

  it("A2 matches the reference on the edge cases JSON has", () => {
    const holes = [1, , 3]; // eslint-disable-line no-sparse-arrays
    const arrayWithToJson = Object.assign([1, 2], { toJSON: () => "x" });
    const cases: unknown[] = [
      { a: undefined, b: () => 1, c: [undefined, () => 1, NaN, Infinity, -0], e: 'é\u2028"\n', f: {}, g: [], h: true, i: null },
      { when: new Date(0), nested: { toJSON: () => "hidden" } },
      holes,
      arrayWithToJson,
      Object.create(null, { b: { value: 1, enumerable: true }, a: { value: 2, enumerable: true } }),
      "text",
      7,
      null,
      undefined,
    ];
    for (const value of cases) expect(canonicalJson(value)).toBe(reference(value));
  });

  it("A2 matches the reference on arbitrary JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => canonicalJson(value) === reference(value)),
      { numRuns: 500 },
    );
  });

  it("A2 matches the reference on values already in canonical order (the no-copy path)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const ordered: unknown = JSON.parse(reference(value));
        return canonicalJson(ordered) === reference(value);
      }),
      { numRuns: 500 },
    );
    // In order at the top, out of order below; a plain object beside a class instance.
    expect(canonicalJson({ a: { z: 1, b: 2 }, b: [{ d: 1, c: 2 }] })).toBe(reference({ a: { z: 1, b: 2 }, b: [{ d: 1, c: 2 }] }));
    expect(canonicalJson({ a: new Date(0), b: new Map([[1, 2]]) })).toBe(reference({ a: new Date(0), b: new Map([[1, 2]]) }));
  });

  it("A2 orders keys by UTF-16 code units, like the default sort, in small and large objects", () => {
    const keys = ["b", "a", "é", "Z", "10", "9", "\u{1F600}", "\uFFFF", "", "a b", "ab", "A"];
    const small = Object.fromEntries(keys.map((key, index) => [key, index]));
    expect(canonicalJson(small)).toBe(reference(small));
    const large = Object.fromEntries([...keys, ...Array.from({ length: 20 }, (_, index) => `k${20 - index}`)].map((key, index) => [key, index]));
    expect(canonicalJson(large)).toBe(reference(large));
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: "binary" }), fc.integer(), { maxKeys: 40 }), (value) => canonicalJson(value) === reference(value)),
      { numRuns: 300 },
    );
  });

  it('A2 keeps an own "__proto__" key (JSON.parse makes one): such arguments never share a digest with the same object without it', () => {
    const parsed = JSON.parse('{"b":1,"__proto__":{"x":1}}') as unknown;
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"x":1},"b":1}');
    expect(canonicalJson(parsed)).not.toBe(canonicalJson({ b: 1 }));
    expect(canonicalJson(JSON.parse('{"__proto__":0}'))).toBe('{"__proto__":0}');
  });

  it("refuses a cyclic or too deep value with a RangeError, like the reference", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(RangeError);
    let deep: unknown = 1;
    for (let depth = 0; depth < 300; depth += 1) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(RangeError);
  });

  it("never changes its input (already-canonical values are serialized in place)", () => {
    const value = { a: { c: [1, { e: 1, d: 2 }] }, b: 2 };
    const before = JSON.stringify(value);
    expect(canonicalJson(value)).toBe('{"a":{"c":[1,{"d":2,"e":1}]},"b":2}');
    expect(JSON.stringify(value)).toBe(before);
  });

  it("A2 M3 an object's own toJSON is never called: the text is its keys, as the doc says", () => {
    const hijack = { b: 1, toJSON: () => "HIJACKED" };
    expect(canonicalJson(hijack)).toBe('{"b":1}');
    expect(canonicalJson([{ z: 1, toJSON: () => 5 }])).toBe('[{"z":1}]');
    expect(canonicalJson({ nested: { a: 1, toJSON: () => ({ other: true }) } })).toBe('{"nested":{"a":1}}');
    // A toJSON that is data, not a function, is an ordinary key.
    expect(canonicalJson({ toJSON: "text", a: 1 })).toBe('{"a":1,"toJSON":"text"}');
  });
});
