import { Type } from "typebox";
import { describe, expect, it, vi } from "vitest";
import { defineTool, LIMITS, OpenWorkerError } from "../src/index.js";
import { captureError, captureRejection, runTool } from "../src/testing/index.js";
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
    expect(() => compileInputSchema({ $schema: "http://json-schema.org/draft-04/schema#", type: "object" }, "x.z")).toThrow(/supported dialects/);
  });

  it("B5 accepts draft-07 and 2020-12 schemas as MCP servers publish them", () => {
    const draft7 = compileInputSchema({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { n: { type: "integer" } } }, "x.d7");
    expect(draft7.check({ n: 1.5 }).ok).toBe(false);
    const draft2020 = compileInputSchema(
      {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { n: { type: "integer" }, pair: { type: "array", prefixItems: [{ type: "string" }] } },
      },
      "x.d2020",
    );
    expect(draft2020.check({ n: 2 }).ok).toBe(true);
  });

  it("E5 B5 a schema without $schema that uses 2020-12 keywords is read as 2020-12 (MCP 2025-11-25's default), one with draft-07 forms as draft-07", () => {
    const tuple = compileInputSchema(
      {
        type: "object",
        properties: { point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false } },
        dependentRequired: { start: ["end"] },
      },
      "x.undeclared2020",
    );
    expect(tuple.check({ point: [1, 2] })).toEqual({ ok: true });
    expect(tuple.check({ point: [1, 2, 3] }).ok).toBe(false);
    expect(tuple.check({ point: [1, 2], start: 1 })).toMatchObject({ ok: false, message: expect.stringContaining("end") });
    const closed = compileInputSchema({ type: "object", properties: { a: { type: "string" } }, unevaluatedProperties: false }, "x.unevaluated");
    expect(closed.check({ a: "x", b: 1 }).ok).toBe(false);
    // Draft-07's array form of `items` keeps the draft-07 reading, 2020-12 keywords or not.
    const draft7 = compileInputSchema(
      { type: "object", properties: { pair: { type: "array", items: [{ type: "string" }], additionalItems: false } } },
      "x.undeclared7",
    );
    expect(draft7.check({ pair: ["a", "b"] }).ok).toBe(false);
    // 2019-09's recursive references (replaced in 2020-12) are read as 2019-09, and work.
    const tree = compileInputSchema(
      { type: "object", $recursiveAnchor: true, properties: { name: { type: "string" }, child: { $recursiveRef: "#" } } },
      "x.recursive2019",
    );
    expect(tree.check({ name: "a", child: { name: "b" } })).toEqual({ ok: true });
    expect(tree.check({ name: "a", child: { name: 7 } }).ok).toBe(false);
  });

  it("B5 M3 each schema compiles as if alone: a shared $id neither collides nor lingers", () => {
    const id = "https://schemas.example.com/shared.json";
    const alpha = compileInputSchema({ $id: id, type: "object", properties: { a: { type: "string" } }, required: ["a"] }, "alpha.t");
    // Another provider's schema with the same $id, then alpha's schema changed under the same $id.
    const beta = compileInputSchema({ $id: id, type: "object", properties: { b: { type: "number" } }, required: ["b"] }, "beta.t");
    const alpha2 = compileInputSchema(
      { $id: id, type: "object", properties: { a: { type: "string" }, extra: { type: "boolean" } }, required: ["a"] },
      "alpha.t",
    );
    expect(alpha.check({ a: "x" }).ok).toBe(true);
    expect(beta.check({ b: 1 }).ok).toBe(true);
    expect(beta.check({ a: "x" }).ok).toBe(false);
    expect(alpha2.check({ a: "x", extra: 1 }).ok).toBe(false);
    // A nested $id is no more shared than a root one.
    const nested = { type: "object", properties: { p: { $id: "https://schemas.example.com/point.json", type: "object", required: ["x"] } } };
    expect(compileInputSchema(nested, "one.t").check({ p: {} }).ok).toBe(false);
    expect(compileInputSchema({ ...nested, title: "again" }, "two.t").check({ p: { x: 1 } }).ok).toBe(true);
    // Relative $ids as TypeBox users give them: two tools, both "Args".
    expect(compileInputSchema({ $id: "Args", type: "object", properties: { city: { type: "string" } } }, "weather.now").check({ city: "x" }).ok).toBe(true);
    expect(compileInputSchema({ $id: "Args", type: "object", properties: { text: { type: "string" } } }, "notes.add").check({ text: 1 }).ok).toBe(false);
  });

  it("B5 M3 a $ref to another tool's $id fails the same way whatever was compiled before", () => {
    const id = "https://schemas.example.com/ref-target.json";
    const referring = (title: string) => ({ type: "object", title, properties: { x: { $ref: `${id}#/properties/a` } } });
    const before = captureCode(() => compileInputSchema(referring("before"), "gamma.t"));
    compileInputSchema({ $id: id, type: "object", properties: { a: { type: "string" } } }, "alpha.target");
    const after = captureCode(() => compileInputSchema(referring("after"), "gamma.t"));
    expect(before).toBe("SCHEMA_INVALID");
    expect(after).toBe("SCHEMA_INVALID");
  });

  it("E5 B5 the dialect is read from schema positions only: data in an OpenAPI example does not make a schema draft-07", () => {
    const base = {
      type: "object",
      properties: {
        items: { type: "array" },
        a: { type: "string" },
        b: { type: "string" },
        pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] },
      },
      dependentRequired: { a: ["b"] },
    };
    const bad = { a: "x", pair: [1, "not a number"] };
    for (const extra of [
      { example: { items: ["apple", "pear"], a: "x", b: "y" } },
      { "x-sample": { additionalItems: true, dependencies: {} } },
      { default: { items: [1] } },
    ]) {
      const check = compileInputSchema({ ...base, ...extra }, "shop.order").check(bad);
      expect(check.ok, JSON.stringify(extra)).toBe(false);
      expect(check.ok ? [] : check.issues.map((issue) => issue.path)).toEqual(["/pair/0", "/pair/1", ""]);
    }
    // A draft-07 form in a real schema position still makes it draft-07.
    const tuple = compileInputSchema(
      { type: "object", properties: { t: { type: "array", items: [{ type: "string" }] } }, dependentRequired: { a: ["b"] } },
      "x.tuple7",
    );
    expect(tuple.check({ a: 1 }).ok).toBe(true);
  });

  it("E5 an argument mismatch message names the first 20 problems and counts the rest, within 4 KB", () => {
    const validator = compileInputSchema(
      { type: "object", properties: { list: { type: "array", items: { type: "string" } } }, additionalProperties: false },
      "example.tags",
    );
    const check = validator.check({ list: Array.from({ length: 130_000 }, () => 0) });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.issues).toHaveLength(130_000);
    expect(check.message.split("; ").filter((part) => part.startsWith("/list/"))).toHaveLength(20);
    expect(check.message).toMatch(/; … \(129980 more\)$/);
    const longKey = "k".repeat(100_000);
    const long = validator.check({ [longKey]: 1 });
    expect(long.ok).toBe(false);
    if (!long.ok) expect(Buffer.byteLength(long.message)).toBeLessThanOrEqual(LIMITS.errorMessageBytes);
  });
});

describe("unknown formats (B5)", () => {
  it("B5 ajv never writes to the console, whatever the schema (an unknown format was logged on every compile)", () => {
    const written = [
      vi.spyOn(console, "warn").mockImplementation(() => undefined),
      vi.spyOn(console, "error").mockImplementation(() => undefined),
      vi.spyOn(console, "log").mockImplementation(() => undefined),
      vi.spyOn(process.stderr, "write").mockImplementation(() => true),
    ];
    const schema = { type: "object", title: "console", properties: { q: { type: "string", format: "phone" }, r: { type: "string", format: "postcode" } } };
    compileInputSchema(schema, "mcp.lenient");
    for (const spy of written) expect(spy).not.toHaveBeenCalled();
  });

  it("B5 with strictFormats (native tools) an unknown format is SCHEMA_INVALID naming the tool, the path and the known formats; without it (MCP) it compiles, unchecked", () => {
    const schema = { type: "object", title: "strict", properties: { contact: { type: "object", properties: { phone: { type: "string", format: "phone" } } } } };
    // Compiled leniently first (an MCP server's copy): the cached validator is still refused for a native tool.
    expect(compileInputSchema(schema, "mcp.contacts").check({ contact: { phone: "anything" } }).ok).toBe(true);
    const error = captureError(() => compileInputSchema(schema, "shop.contact", { strictFormats: true }));
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain('tool "shop.contact"');
    expect(error.message).toContain('unknown format "phone" at /properties/contact/properties/phone');
    expect(error.message).toMatch(/Known formats: date, time, date-time, .*email.*uuid/);
    // Known formats pass in strict mode and are checked.
    const email = compileInputSchema({ type: "object", properties: { to: { type: "string", format: "email" } } }, "shop.mail", { strictFormats: true });
    expect(email.check({ to: "nope" }).ok).toBe(false);
  });

  it("B5 runTool checks a native tool's schema strictly: an unknown format is refused before the tool runs", async () => {
    const tool = defineTool({
      name: "shop.call_back",
      description: "Call a customer back.",
      version: "1",
      inputSchema: Type.Object({ phone: Type.String({ format: "phone" }) }),
      call: () => ({ json: null }),
    });
    const error = await captureRejection(runTool(tool, { phone: "+1 555" }));
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain('unknown format "phone" at /properties/phone');
  });
});

describe("schema error messages say what to fix (B5)", () => {
  it.each([
    ["Type.BigInt()", Type.Object({ q: Type.BigInt() }), '"type" is "bigint"', true],
    ["Type.Undefined()", Type.Object({ q: Type.String(), u: Type.Optional(Type.Undefined()) }), '"type" is "undefined"', true],
    ['{type:"int"}', { type: "object", properties: { q: { type: "int" } } }, '"type" is "int"', false],
    ['{type:["string","bigint"]}', { type: "object", properties: { q: { type: ["string", "bigint"] } } }, '"type" lists "bigint"', true],
  ])("B5 a schema using %s is SCHEMA_INVALID quoting the value and listing the JSON Schema types", (_label, schema, quoted, typebox) => {
    const error = captureError(() => compileInputSchema(schema as never, "shop.ids"));
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain('tool "shop.ids"');
    expect(error.message).toContain(quoted);
    expect(error.message).toContain("the JSON Schema types are array, boolean, integer, null, number, object, string");
    expect(error.message).not.toContain("must be equal to one of the allowed values");
    expect(error.message.includes("TypeBox gives a JavaScript-only type")).toBe(typebox);
  });

  it("B5 other meta-schema problems keep ajv's words beside the type explanation", () => {
    const error = captureError(() =>
      compileInputSchema({ type: "object", properties: { q: { type: "int" }, r: { type: "string", minLength: "x" } } }, "shop.mixed"),
    );
    expect(error.message).toContain('at /properties/q "type" is "int"');
    expect(error.message).toContain("/properties/r/minLength must be integer");
  });
});

describe("enum and const mismatches name the allowed values (E5)", () => {
  it("E5 an enum, a const and a TypeBox union of literals say which values are allowed", () => {
    const validator = compileInputSchema(
      Type.Object({ size: Type.Union([Type.Literal("small"), Type.Literal("large")]), unit: Type.Enum(["kg", "lb"]), kind: Type.Literal("parcel") }) as never,
      "shop.ship",
    );
    const check = validator.check({ size: "huge", unit: "stone", kind: "letter" });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.message).toContain('/size must be equal to one of the allowed values: "small", "large"');
    expect(check.message).toContain('/unit must be equal to one of the allowed values: "kg", "lb"');
    expect(check.message).toContain('/kind must be equal to constant "parcel"');
  });

  it("E5 a value outside a union of literals is refused naming the allowed values", () => {
    const validator = compileInputSchema(
      Type.Object({
        unit: Type.Union([Type.Literal("kg"), Type.Literal("lb")]),
        level: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(true)]),
        mode: Type.Optional({ oneOf: [{ const: "fast" }, { const: "safe" }] }),
        code: Type.Optional(Type.Union(Array.from({ length: 100 }, (_, index) => Type.Literal(`CODE_${index}`)))),
      }) as never,
      "shop.weigh",
    );
    const check = validator.check({ unit: "stone", level: "high", mode: "slow", code: "nope" });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.issues).toEqual([
      { path: "/unit", message: 'must be equal to one of the allowed values: "kg", "lb"' },
      { path: "/level", message: "must be equal to one of the allowed values: 1, 2, true" },
      { path: "/mode", message: 'must be equal to one of the allowed values: "fast", "safe"' },
      { path: "/code", message: expect.stringMatching(/^must be equal to one of the allowed values: "CODE_0", "CODE_1", .*, … \(\d+ more\)$/) },
    ]);
    expect(check.issues[3]!.message.length).toBeLessThan(300);
    expect(check.message).toBe(check.issues.map((issue) => `${issue.path} ${issue.message}`).join("; "));
  });

  it("E5 a union with a branch that is not a literal keeps every branch's reason", () => {
    const validator = compileInputSchema(Type.Object({ size: Type.Union([Type.Literal("small"), Type.Number()]) }) as never, "shop.size");
    const check = validator.check({ size: "huge" });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.issues.map((issue) => issue.message)).toEqual(['must be equal to constant "small"', "must be number", "must match a schema in anyOf"]);
  });

  it("E5 a long list of allowed values, or a long value, is cut and counted", () => {
    const codes = Array.from({ length: 1_000 }, (_, index) => `CODE_${index}`);
    const validator = compileInputSchema({ type: "object", properties: { code: { enum: codes }, note: { const: "n".repeat(10_000) } } }, "shop.codes");
    const check = validator.check({ code: "nope", note: "x" });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    const [code, note] = check.issues.map((issue) => issue.message);
    expect(code).toMatch(/^must be equal to one of the allowed values: "CODE_0", "CODE_1", .*, … \(\d+ more\)$/);
    expect(code!.length).toBeLessThan(300);
    expect(note).toBe(`must be equal to constant "${"n".repeat(100)}"…`);
  });
});

function captureCode(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return OpenWorkerError.isInstance(error) ? error.code : "uncoded";
  }
  return undefined;
}
