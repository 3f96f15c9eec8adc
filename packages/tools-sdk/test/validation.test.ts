import { describe, expect, it } from "vitest";
import { OpenWorkerError } from "../src/index.js";
import { compileInputSchema, compiledSchemaCount, schemaFingerprint } from "../src/validation/index.js";

describe("schema compilation", () => {
  it("B5 fingerprints ignore key order and compile each distinct schema once", () => {
    const a = { type: "object", properties: { q: { type: "string", format: "uri" } }, required: ["q"] };
    const b = { required: ["q"], properties: { q: { format: "uri", type: "string" } }, type: "object" };
    expect(schemaFingerprint(a)).toBe(schemaFingerprint(b));
    const before = compiledSchemaCount();
    const first = compileInputSchema(a, "x.a");
    const second = compileInputSchema(b, "x.b");
    expect(second).toBe(first);
    expect(compiledSchemaCount()).toBe(before + 1);
    expect(first.check({ q: "not a uri" }).ok).toBe(false);
    expect(first.check({ q: "https://example.com" }).ok).toBe(true);
  });

  it("B5 an invalid schema fails with SCHEMA_INVALID naming the tool", () => {
    try {
      compileInputSchema({ type: "object", properties: { q: { type: "strin" } } }, "acer.battery");
      expect.unreachable();
    } catch (error) {
      expect(OpenWorkerError.hasCode(error, "SCHEMA_INVALID")).toBe(true);
      expect((error as Error).message).toContain('"acer.battery"');
    }
    expect(() => compileInputSchema({ type: "string" }, "x.y")).toThrow(/object schema/);
    expect(() => compileInputSchema({ $schema: "http://json-schema.org/draft-04/schema#", type: "object" }, "x.z")).toThrow(
      /supported dialects/,
    );
  });

  it("B5 accepts draft-07 and 2020-12 schemas as MCP servers publish them", () => {
    const draft7 = compileInputSchema({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { n: { type: "integer" } } }, "x.d7");
    expect(draft7.check({ n: 1.5 }).ok).toBe(false);
    const draft2020 = compileInputSchema(
      { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { n: { type: "integer" }, pair: { type: "array", prefixItems: [{ type: "string" }] } } },
      "x.d2020",
    );
    expect(draft2020.check({ n: 2 }).ok).toBe(true);
  });

  it("E5 B5 a schema without $schema that uses 2020-12 keywords is read as 2020-12 (MCP 2025-11-25's default), one with draft-07 forms as draft-07", () => {
    const tuple = compileInputSchema(
      { type: "object", properties: { point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false } }, dependentRequired: { start: ["end"] } },
      "x.undeclared2020",
    );
    expect(tuple.check({ point: [1, 2] })).toEqual({ ok: true });
    expect(tuple.check({ point: [1, 2, 3] }).ok).toBe(false);
    expect(tuple.check({ point: [1, 2], start: 1 })).toMatchObject({ ok: false, message: expect.stringContaining("end") });
    const closed = compileInputSchema({ type: "object", properties: { a: { type: "string" } }, unevaluatedProperties: false }, "x.unevaluated");
    expect(closed.check({ a: "x", b: 1 }).ok).toBe(false);
    // Draft-07's array form of `items` keeps the draft-07 reading, 2020-12 keywords or not.
    const draft7 = compileInputSchema({ type: "object", properties: { pair: { type: "array", items: [{ type: "string" }], additionalItems: false } } }, "x.undeclared7");
    expect(draft7.check({ pair: ["a", "b"] }).ok).toBe(false);
    // 2019-09's recursive references (replaced in 2020-12) are read as 2019-09, and work.
    const tree = compileInputSchema({ type: "object", $recursiveAnchor: true, properties: { name: { type: "string" }, child: { $recursiveRef: "#" } } }, "x.recursive2019");
    expect(tree.check({ name: "a", child: { name: "b" } })).toEqual({ ok: true });
    expect(tree.check({ name: "a", child: { name: 7 } }).ok).toBe(false);
  });
});
