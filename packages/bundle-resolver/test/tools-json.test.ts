import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseToolsJson } from "../src/index.js";
import { thrown } from "./helpers.js";

describe("tools.json", () => {
  it("B1/B3 reads versions 3, 2 and 1", () => {
    expect(parseToolsJson('{"version":3,"tools":["example.web_search","acer.acer_care_center_batterystatus_get"]}', "tools.json")).toEqual({
      version: 3,
      tools: ["example.web_search", "acer.acer_care_center_batterystatus_get"],
    });
    expect(parseToolsJson('{"version":2,"mcpServers":{"acer":["acer_care_center_batterystatus_get"]}}', "tools.json")).toEqual({
      version: 2,
      mcpServers: { acer: ["acer_care_center_batterystatus_get"] },
    });
    expect(parseToolsJson('{"version":1,"mcpServers":["acer"]}', "tools.json")).toEqual({ version: 1, mcpServers: ["acer"] });
  });

  it("B6 accepts a UTF-8 BOM and an empty v3 list", () => {
    expect(parseToolsJson('\uFEFF{"version":3,"tools":[]}', "tools.json")).toEqual({ version: 3, tools: [] });
  });

  it("B3 keeps names exactly, case included", () => {
    expect(parseToolsJson('{"version":3,"tools":["Example.Tool","example.tool"]}', "t.json")).toEqual({
      version: 3,
      tools: ["Example.Tool", "example.tool"],
    });
  });

  it.each([
    ["{", "TOOLS_JSON_INVALID_JSON", "not valid JSON"],
    ["[]", "TOOLS_JSON_INVALID", "must be a JSON object"],
    ["null", "TOOLS_JSON_INVALID", "got null"],
    ['{"tools":[]}', "TOOLS_JSON_INVALID", 'field "version" is missing'],
    ['{"version":4,"tools":[]}', "TOOLS_JSON_VERSION_UNKNOWN", "is 4"],
    ['{"version":"3","tools":[]}', "TOOLS_JSON_VERSION_UNKNOWN", 'is "3"'],
    ['{"version":3.5,"tools":[]}', "TOOLS_JSON_VERSION_UNKNOWN", "3.5"],
    ['{"version":3}', "TOOLS_JSON_INVALID", 'field "tools" is missing'],
    ['{"version":3,"tools":"example.a"}', "TOOLS_JSON_INVALID", 'field "tools" must be an array'],
    ['{"version":3,"tools":[1]}', "TOOLS_JSON_INVALID", 'field "tools[0]" must be a string'],
    ['{"version":3,"tools":[""]}', "TOOLS_JSON_INVALID", 'field "tools[0]" is empty'],
    ['{"version":3,"tools":["example.a","example.a"]}', "TOOLS_JSON_DUPLICATE", '"tools[1]" repeats "example.a" from "tools[0]"'],
    ['{"version":3,"tools":["web_search"]}', "NAME_NOT_QUALIFIED", 'field "tools[0]"'],
    ['{"version":3,"tools":["example.web search"]}', "NAME_INVALID_CHARACTER", 'field "tools[0]"'],
    ['{"version":3,"tools":["openworker.shell"]}', "NAMESPACE_RESERVED", 'field "tools[0]"'],
    [`{"version":3,"tools":["n.${"x".repeat(80)}"]}`, "NAME_TOO_LONG", 'field "tools[0]"'],
    ['{"version":3,"tools":[],"mcpServers":["acer"]}', "TOOLS_JSON_INVALID", 'field "mcpServers" is not known in version 3'],
    ['{"version":2,"mcpServers":["acer"]}', "TOOLS_JSON_INVALID", 'field "mcpServers" must be an object'],
    ['{"version":2}', "TOOLS_JSON_INVALID", 'field "mcpServers" is missing'],
    ['{"version":2,"mcpServers":{"acer":"tool"}}', "TOOLS_JSON_INVALID", 'field "mcpServers.acer" must be an array'],
    ['{"version":2,"mcpServers":{"acer":[]}}', "TOOLS_JSON_INVALID", "lists no tools"],
    ['{"version":2,"mcpServers":{"acer":["a","a"]}}', "TOOLS_JSON_DUPLICATE", "mcpServers.acer[1]"],
    ['{"version":2,"mcpServers":{"acer":["a/b"]}}', "NAME_INVALID_CHARACTER", "mcpServers.acer[0]"],
    ['{"version":2,"mcpServers":{"openworker":["a"]}}', "NAMESPACE_RESERVED", "mcpServers.openworker"],
    ['{"version":2,"mcpServers":{"a.b":["c"]}}', "NAMESPACE_INVALID", "mcpServers.a.b"],
    ['{"version":2,"mcpServers":{"acer":[""]}}', "TOOLS_JSON_INVALID", "mcpServers.acer[0]"],
    ['{"version":1,"mcpServers":{"acer":[]}}', "TOOLS_JSON_INVALID", 'field "mcpServers" must be an array'],
    ['{"version":1,"mcpServers":["acer","acer"]}', "TOOLS_JSON_DUPLICATE", "mcpServers[1]"],
    ['{"version":1,"mcpServers":[""]}', "TOOLS_JSON_INVALID", "mcpServers[0]"],
    ['{"version":1,"mcpServers":["OpenWorker"]}', "NAMESPACE_RESERVED", "mcpServers[0]"],
    ['{"version":1,"mcpServers":["acer"],"tools":[]}', "TOOLS_JSON_INVALID", 'field "tools" is not known in version 1'],
    ['{"version":2,"mcpServers":{"acer":["a"],"acer":["b"]}}', "TOOLS_JSON_DUPLICATE", 'key "acer" appears twice in "mcpServers"'],
    ['{"version":3,"tools":[],"version":3}', "TOOLS_JSON_DUPLICATE", 'key "version" appears twice'],
  ])("B6 rejects %s with %s naming the file and field", (text, code, fragment) => {
    const error = thrown(() => parseToolsJson(text, "coworker/tools.json"));
    expect(error.code).toBe(code);
    expect(error.message).toContain("coworker/tools.json");
    expect(error.message).toContain(fragment);
  });

  it("B6 refuses tools.json text over 1 MiB", () => {
    const text = `{"version":3,"tools":[]}${" ".repeat(1024 * 1024)}`;
    expect(thrown(() => parseToolsJson(text, "tools.json")).code).toBe("BUNDLE_FILE_TOO_LARGE");
  });

  it("B6 never crashes: any text parses or fails with a coded OpenWorkerError", () => {
    const jsonish = fc.oneof(
      fc.string(),
      fc.json(),
      fc.record({ version: fc.oneof(fc.constantFrom(1, 2, 3), fc.jsonValue()), tools: fc.jsonValue(), mcpServers: fc.jsonValue() }, { requiredKeys: [] }).map((value) => JSON.stringify(value)),
      fc.record({ version: fc.constant(3), tools: fc.array(fc.string({ maxLength: 12 })) }).map((value) => JSON.stringify(value)),
    );
    fc.assert(
      fc.property(jsonish, (text) => {
        try {
          const selection = parseToolsJson(text, "tools.json");
          expect([1, 2, 3]).toContain(selection.version);
        } catch (error) {
          expect(error).toSatisfy((value: unknown) => typeof (value as { code?: unknown }).code === "string");
          expect((error as Error).message.startsWith("tools.json: ")).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("B3 round-trips any valid v3 selection", () => {
    const name = fc
      .tuple(fc.stringMatching(/^[A-Za-z0-9_-]{1,10}$/), fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/))
      .filter(([namespace]) => namespace.toLowerCase() !== "openworker")
      .map(([namespace, tool]) => `${namespace}.${tool}`);
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 20 }), (tools) => {
        expect(parseToolsJson(JSON.stringify({ version: 3, tools }), "tools.json")).toEqual({ version: 3, tools });
      }),
    );
  });
});
