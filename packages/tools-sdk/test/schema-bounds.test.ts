import { describe, expect, it } from "vitest";
import { SDK_ERROR_CODES } from "../src/index.js";
import { captureError } from "../src/testing/index.js";
import { compileInputSchema, SCHEMA_BOUNDS } from "../src/validation/index.js";

const values = (count: number, prefix = "value_"): string[] => Array.from({ length: count }, (_, index) => `${prefix}${index}`);
const objectOf = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: "object", properties, ...extra });

// Every case here is far past where a pairwise or unbounded compile took minutes: without
// the bounds and the linear uniqueItems, this file times out instead of failing.
describe("schema compilation is bounded (B5)", () => {
  it("B5 a 100,000-value enum compiles within bounds and its arguments are validated by it (E5)", () => {
    const validator = compileInputSchema(objectOf({ sku: { enum: values(100_000) } }, { required: ["sku"] }), "shop.order");
    expect(validator.check({ sku: "value_99999" })).toEqual({ ok: true });
    const wrong = validator.check({ sku: "value_100000" });
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.message).toMatch(/^\/sku must be equal to one of the allowed values: "value_0", .*\(\d+ more\)$/);
    expect(validator.check({}).ok).toBe(false);
  });

  it("B5 a draft-07 enum of 100,000 values with one duplicate is still refused as invalid JSON Schema, naming the tool and both items", () => {
    const error = captureError(() => compileInputSchema(objectOf({ sku: { enum: [...values(99_999), "value_7"] } }), "shop.order"));
    expect(error.code).toBe(SDK_ERROR_CODES.SCHEMA_INVALID);
    expect(error.message).toContain('tool "shop.order"');
    expect(error.message).toContain("data/properties/sku/enum must NOT have duplicate items (items ## 7 and 99999 are identical)");
    // Equal as JSON values, whatever the key order.
    const objects = captureError(() =>
      compileInputSchema(
        objectOf({
          at: {
            enum: [
              { x: 1, y: 2 },
              { y: 2, x: 1 },
            ],
          },
        }),
        "map.pin",
      ),
    );
    expect(objects.message).toContain("items ## 0 and 1 are identical");
    // 2019-09 and 2020-12 only recommend unique values; their meta-schemas accept duplicates, as before.
    const v2020 = { $schema: "https://json-schema.org/draft/2020-12/schema", ...objectOf({ unit: { enum: ["kg", "kg", "lb"] } }) };
    expect(compileInputSchema(v2020, "shop.weigh").check({ unit: "lb" })).toEqual({ ok: true });
  });

  it("B5 all enums of a schema together beyond SCHEMA_BOUNDS.enumValues are refused with SCHEMA_TOO_LARGE naming the tool and where", () => {
    const half = SCHEMA_BOUNDS.enumValues / 2;
    const schema = objectOf({ a: { enum: values(half, "a") }, b: { enum: values(half + 1, "b") } });
    const error = captureError(() => compileInputSchema(schema, "mcp.catalog_pick"));
    expect(error.code).toBe(SDK_ERROR_CODES.SCHEMA_TOO_LARGE);
    expect(error.message).toMatch(
      /^input schema of tool "mcp\.catalog_pick" lists more than 100,000 enum values \(at \/properties\/[ab]\/enum\); .*check it in the tool$/,
    );
    expect(error.details).toMatchObject({ tool: "mcp.catalog_pick", bound: "enumValues", limit: SCHEMA_BOUNDS.enumValues });
  });

  it("E5 uniqueItems over 100,000 object arguments is checked in one pass, with ajv's verdict and message", () => {
    const validator = compileInputSchema(objectOf({ rows: { type: "array", uniqueItems: true } }), "sheet.append");
    const rows = Array.from({ length: 100_000 }, (_, index) => ({ row: index }));
    expect(validator.check({ rows })).toEqual({ ok: true });
    const duplicated = validator.check({ rows: [...rows, { row: 5 }] });
    expect(duplicated.ok).toBe(false);
    if (!duplicated.ok) expect(duplicated.issues).toEqual([{ path: "/rows", message: "must NOT have duplicate items (items ## 5 and 100000 are identical)" }]);
    // fast-deep-equal's equality: key order does not count, types do, 0 is -0.
    const check = (items: unknown[]) => validator.check({ rows: items }).ok;
    expect(
      check([
        { a: 1, b: [2] },
        { b: [2], a: 1 },
      ]),
    ).toBe(false);
    expect(check([0, -0])).toBe(false);
    expect(check([1, "1", [1], { 0: 1 }, null, {}, [], true, "true"])).toBe(true);
  });

  it("B5 a schema of exactly SCHEMA_BOUNDS.subschemas compiles; one more, and a 50,000-property schema, are refused with SCHEMA_TOO_LARGE", () => {
    const properties = (count: number) => Object.fromEntries(values(count).map((name) => [name, { type: "string" }]));
    const atBound = compileInputSchema(objectOf(properties(SCHEMA_BOUNDS.subschemas - 1)), "crm.update");
    expect(atBound.check({ value_0: "a", value_4094: "b" })).toEqual({ ok: true });
    expect(atBound.check({ value_4094: 1 }).ok).toBe(false);
    for (const count of [SCHEMA_BOUNDS.subschemas, 50_000]) {
      const error = captureError(() => compileInputSchema(objectOf(properties(count)), "crm.update"));
      expect(error.code).toBe("SCHEMA_TOO_LARGE");
      expect(error.message).toContain('input schema of tool "crm.update" holds more than 4,096 subschemas');
      expect(error.details).toMatchObject({ bound: "subschemas", limit: 4_096 });
    }
  });

  it("B5 a 10,000-branch anyOf is refused by the nesting bound (SCHEMA_TOO_LARGE), not by a stack overflow; a 100-branch one compiles", () => {
    const branches = (count: number) => values(count).map((value) => ({ const: value }));
    const error = captureError(() => compileInputSchema(objectOf({ v: { anyOf: branches(10_000) } }), "pick.one"));
    expect(error.code).toBe("SCHEMA_TOO_LARGE");
    expect(error.details).toMatchObject({ tool: "pick.one", bound: "nesting", path: `/properties/v/anyOf/${SCHEMA_BOUNDS.nesting - 1}` });
    const union = compileInputSchema(objectOf({ v: { oneOf: branches(100) } }), "pick.one");
    expect(union.check({ v: "value_99" })).toEqual({ ok: true });
    expect(union.check({ v: "value_100" }).ok).toBe(false);
  });

  it("B5 a schema nested past SCHEMA_BOUNDS.nesting or jsonDepth, or holding itself, is refused with SCHEMA_TOO_LARGE naming the tool", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 1_000; level++) deep = { type: "object", properties: { a: deep } };
    expect(captureError(() => compileInputSchema(deep, "tree.walk")).details).toMatchObject({ tool: "tree.walk", bound: "nesting" });
    let data: unknown = 1;
    for (let level = 0; level < 1_000; level++) data = [data];
    expect(captureError(() => compileInputSchema(objectOf({ a: { default: data } }), "tree.walk")).details).toMatchObject({
      tool: "tree.walk",
      bound: "jsonDepth",
    });
    const cyclic: Record<string, unknown> = { type: "object", properties: {} };
    (cyclic.properties as Record<string, unknown>).self = cyclic;
    const error = captureError(() => compileInputSchema(cyclic, "tree.self"));
    expect(error.code).toBe("SCHEMA_TOO_LARGE");
    expect(error.message).toContain('tool "tree.self"');
  });

  it("B5 patterns beyond SCHEMA_BOUNDS.patterns or patternCharacters are refused with SCHEMA_TOO_LARGE before RE2 compiles any", () => {
    const many = objectOf({}, { patternProperties: Object.fromEntries(values(SCHEMA_BOUNDS.patterns + 1).map((name) => [`^${name}$`, { type: "string" }])) });
    expect(captureError(() => compileInputSchema(many, "kv.put")).details).toMatchObject({ bound: "patterns", tool: "kv.put" });
    const long = objectOf({
      a: { type: "string", pattern: "a".repeat(SCHEMA_BOUNDS.patternCharacters / 2) },
      b: { type: "string", pattern: "b".repeat(SCHEMA_BOUNDS.patternCharacters / 2 + 1) },
    });
    expect(captureError(() => compileInputSchema(long, "kv.put")).details).toMatchObject({ bound: "patternCharacters" });
  });

  it("B5 a dependentRequired or dependencies list beyond SCHEMA_BOUNDS.dependentNames is refused with SCHEMA_TOO_LARGE; one at the bound validates", () => {
    const names = values(10_000);
    const v2020 = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", dependentRequired: { a: names } };
    expect(captureError(() => compileInputSchema(v2020, "form.submit")).details).toMatchObject({ bound: "dependentNames", path: "/dependentRequired/a" });
    expect(captureError(() => compileInputSchema({ type: "object", dependencies: { a: names } }, "form.submit")).code).toBe("SCHEMA_TOO_LARGE");
    const atBound = compileInputSchema({ type: "object", dependencies: { a: names.slice(0, SCHEMA_BOUNDS.dependentNames) } }, "form.submit");
    expect(atBound.check({ b: 1 })).toEqual({ ok: true });
    expect(atBound.check({ a: 1 }).ok).toBe(false);
  });

  it("B5 a $ref to a large definition is compiled once, not inlined at each of 600 uses, and validates", () => {
    const big = objectOf(Object.fromEntries(values(600, "field_").map((name) => [name, { type: "integer" }])));
    const schema = objectOf(Object.fromEntries(values(600, "use_").map((name) => [name, { $ref: "#/definitions/big" }])), { definitions: { big } });
    const validator = compileInputSchema(schema, "bulk.edit");
    expect(validator.check({ use_0: { field_0: 1 }, use_599: { field_599: 2 } })).toEqual({ ok: true });
    const wrong = validator.check({ use_599: { field_599: "x" } });
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.issues).toEqual([{ path: "/use_599/field_599", message: "must be integer" }]);
  });

  it("B5 a schema breaking its meta-schema thousands of times gets a bounded message: the first 20, then how many more", () => {
    const schema = objectOf(Object.fromEntries(values(4_000).map((name) => [name, { minLength: -1 }])));
    const error = captureError(() => compileInputSchema(schema, "wide.tool"));
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain("; … (3980 more)");
    expect(error.message.length).toBeLessThan(4_096);
  });
});
