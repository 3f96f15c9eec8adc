import { describe, expect, it } from "vitest";
import { captureError } from "../src/testing/index.js";
import { ajvEngineGenerations, cachedSchemaCount, ENGINE_COMPILATIONS, SCHEMA_CACHE_LIMIT } from "../src/validation/compile.js";
import { compileInputSchema, compiledSchemaCount } from "../src/validation/index.js";

let churned = 0;
/** A schema never seen before, as an MCP server with a dynamic property name lists at each turn. */
function churn(): void {
  compileInputSchema({ type: "object", properties: { [`field_${++churned}`]: { type: "boolean" } } }, "mcp.churn");
}

describe("bounded validator cache and engines (B5)", () => {
  it("B5 the cache keeps at most SCHEMA_CACHE_LIMIT schemas, dropping the least recently used; a dropped schema compiles again and validates", () => {
    const kept = { type: "object", title: "kept", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] };
    const dropped = { type: "object", title: "dropped", properties: { day: { type: "string", format: "date" } }, required: ["day"] };
    const keptValidator = compileInputSchema(kept, "x.kept");
    const droppedValidator = compileInputSchema(dropped, "x.dropped");
    for (let i = 0; i < SCHEMA_CACHE_LIMIT + 100; i++) {
      churn();
      // Used at every turn, it stays recent: never dropped, never compiled again.
      if (i % 100 === 0) expect(compileInputSchema(kept, "x.kept")).toBe(keptValidator);
      expect(cachedSchemaCount()).toBeLessThanOrEqual(SCHEMA_CACHE_LIMIT);
    }
    expect(cachedSchemaCount()).toBe(SCHEMA_CACHE_LIMIT);

    const before = compiledSchemaCount();
    expect(compileInputSchema(kept, "x.kept")).toBe(keptValidator);
    expect(compiledSchemaCount()).toBe(before);
    const again = compileInputSchema(dropped, "x.dropped");
    expect(compiledSchemaCount()).toBe(before + 1);
    expect(again).not.toBe(droppedValidator);
    expect(again.fingerprint).toBe(droppedValidator.fingerprint);
    expect(compileInputSchema(dropped, "x.dropped")).toBe(again);
    expect(compiledSchemaCount()).toBe(before + 1);
    for (const validator of [again, droppedValidator]) {
      expect(validator.check({ day: "2024-02-29" })).toEqual({ ok: true });
      expect(validator.check({ day: "2023-02-29" }).ok).toBe(false);
      expect(validator.check({}).ok).toBe(false);
    }
    expect(cachedSchemaCount()).toBe(SCHEMA_CACHE_LIMIT);
  });

  it("B5 the ajv engines are replaced every ENGINE_COMPILATIONS compilations; validators compiled before keep checking formats, patterns and dialects", () => {
    const draft7 = compileInputSchema(
      {
        type: "object",
        title: "before rotation",
        properties: {
          to: { type: "string", format: "email" },
          at: { type: "string", format: "date-time" },
          sku: { type: "string", pattern: "^[A-Z]{3}-\\d+$" },
        },
        required: ["to", "sku"],
        additionalProperties: false,
      },
      "shop.order",
      { strictFormats: true },
    );
    const draft2020 = compileInputSchema(
      {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        title: "before rotation",
        properties: { pair: { type: "array", prefixItems: [{ type: "string" }], items: false } },
      },
      "x.d2020",
    );
    const draft2019 = compileInputSchema(
      { type: "object", title: "before rotation", $recursiveAnchor: true, properties: { name: { type: "string" }, child: { $recursiveRef: "#" } } },
      "x.recursive2019",
    );
    const unknownFormat = (title: string) => ({ type: "object", title, properties: { phone: { type: "string", format: "phone" } } });
    const refusedBefore = captureError(() => compileInputSchema(unknownFormat("before rotation"), "shop.contact", { strictFormats: true }));

    // Compile until the engines change, then count: the next rotation comes ENGINE_COMPILATIONS compilations later.
    const generation = ajvEngineGenerations();
    let untilRotation = 0;
    while (ajvEngineGenerations() === generation && untilRotation <= ENGINE_COMPILATIONS) {
      churn();
      untilRotation++;
    }
    expect(untilRotation).toBeLessThanOrEqual(ENGINE_COMPILATIONS);
    for (let i = 1; i < ENGINE_COMPILATIONS; i++) churn();
    expect(ajvEngineGenerations()).toBe(generation + 1);
    churn();
    expect(ajvEngineGenerations()).toBe(generation + 2);

    expect(draft7.check({ to: "a@example.com", at: "2024-01-01T10:00:00Z", sku: "ABC-12" })).toEqual({ ok: true });
    const wrong = draft7.check({ to: "not an email", at: "yesterday", sku: "abc-12", extra: 1 });
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.issues.map((issue) => issue.path).sort()).toEqual(["", "/at", "/sku", "/to"]);
    expect(draft7.check({ to: "a@example.com" }).ok).toBe(false);
    expect(draft2020.check({ pair: ["a"] })).toEqual({ ok: true });
    expect(draft2020.check({ pair: ["a", "b"] }).ok).toBe(false);
    expect(draft2019.check({ name: "a", child: { name: "b" } })).toEqual({ ok: true });
    expect(draft2019.check({ name: "a", child: { name: 2 } }).ok).toBe(false);

    // The fresh engines have the formats and RE2 patterns, and unknown formats are still collected.
    const after = compileInputSchema(
      { type: "object", title: "after rotation", properties: { to: { type: "string", format: "email" }, sku: { type: "string", pattern: "^[A-Z]{3}-\\d+$" } } },
      "shop.order",
      { strictFormats: true },
    );
    expect(after.check({ to: "a@example.com", sku: "ABC-1" })).toEqual({ ok: true });
    expect(after.check({ to: "nope", sku: "ABC-1" }).ok).toBe(false);
    expect(after.check({ to: "a@example.com", sku: "ABC-x" }).ok).toBe(false);
    const refusedAfter = captureError(() => compileInputSchema(unknownFormat("after rotation"), "shop.contact", { strictFormats: true }));
    expect(refusedAfter.code).toBe("SCHEMA_INVALID");
    expect(refusedAfter.message).toBe(refusedBefore.message);
    expect(compileInputSchema(unknownFormat("lenient after rotation"), "mcp.contacts").check({ phone: "anything" })).toEqual({ ok: true });
  });
});
