import type { OpenWorkerError } from "@openworker/tools-sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkSelection, parseToolsJson, providersNeeded, resolveSelection, withoutProviders, type BundleSelection } from "../src/index.js";
import { catalog, registryWith, thrown } from "./helpers.js";

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
    // E6: the text around a syntax error is never quoted (a tools.json linked to /proc/self/environ printed "SHELL=/bin").
    ['{"version":3,"tools":[SHELL=/bin/bash]}', "TOOLS_JSON_INVALID_JSON", "tools.json: not valid JSON, line 1, column 23: unexpected character"],
    ['{"version":1e400,"tools":[]}', "TOOLS_JSON_VERSION_UNKNOWN", 'field "version" is Infinity'],
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
      fc
        .record({ version: fc.oneof(fc.constantFrom(1, 2, 3), fc.jsonValue()), tools: fc.jsonValue(), mcpServers: fc.jsonValue() }, { requiredKeys: [] })
        .map((value) => JSON.stringify(value)),
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

  it.each(["__proto__", "constructor", "toString", "hasOwnProperty"])(
    "B3/B6 a v2 server named %s is kept as its own key and resolves like any other",
    (server) => {
      const selection = parseToolsJson(`{"version":2,"mcpServers":{"${server}":["status_get"]}}`, "tools.json");
      expect(selection.version).toBe(2);
      const servers = (selection as Extract<BundleSelection, { version: 2 }>).mcpServers;
      expect(Object.keys(servers)).toEqual([server]);
      expect(servers[server]).toEqual(["status_get"]);
      const registry = registryWith([], [server]);
      expect(providersNeeded(registry, selection)).toEqual([server]);
      const resolved = resolveSelection(registry, selection, [catalog(server, ["status_get"])]);
      expect(resolved.tools.map((tool) => tool.qualifiedName)).toEqual([`${server}.status_get`]);
      // With no catalog it must fail, not resolve to nothing.
      expect(checkSelection(registry, selection, []).map((problem) => problem.code)).toEqual(["CATALOG_MISSING"]);
    },
  );

  it("B3 a v2 selection's servers hold only the servers of the file: no Object.prototype members", () => {
    const selection = parseToolsJson('{"version":2,"mcpServers":{"acer":["a"]}}', "tools.json") as Extract<BundleSelection, { version: 2 }>;
    expect(selection.mcpServers.toString).toBeUndefined();
    expect(selection.mcpServers.constructor).toBeUndefined();
    expect(JSON.stringify(selection)).toBe('{"version":2,"mcpServers":{"acer":["a"]}}');
  });

  it("B3 withoutProviders keeps a server named __proto__ as its own key", () => {
    const selection = parseToolsJson('{"version":2,"mcpServers":{"__proto__":["a"],"acer":["b"]}}', "tools.json");
    const narrowed = withoutProviders(selection, new Set(["acer"])) as Extract<BundleSelection, { version: 2 }>;
    expect(Object.entries(narrowed.mcpServers)).toEqual([["__proto__", ["a"]]]);
  });

  it("B6 reports every bad entry: the first is thrown, counting the others, and details.problems holds them all", () => {
    const text = JSON.stringify({
      version: 3,
      tools: ["example.web_serch", "notification", "ok.tool", "", "a b.c", "ok.tool", 5, "openworker.shell", "nosuch.tool"],
    });
    const error = thrown(() => parseToolsJson(text, "coworker/tools.json"));
    expect(error.code).toBe("NAME_NOT_QUALIFIED");
    expect(error.message.startsWith('coworker/tools.json: field "tools[1]": ')).toBe(true);
    expect(error.message.endsWith(" (and 5 more problems in this file)")).toBe(true);
    const problems = error.details.problems as OpenWorkerError[];
    expect(problems.map((problem) => [problem.code, problem.details.field])).toEqual([
      ["NAME_NOT_QUALIFIED", "tools[1]"],
      ["TOOLS_JSON_INVALID", "tools[3]"],
      ["NAME_INVALID_CHARACTER", "tools[4]"],
      ["TOOLS_JSON_DUPLICATE", "tools[5]"],
      ["TOOLS_JSON_INVALID", "tools[6]"],
      ["NAMESPACE_RESERVED", "tools[7]"],
    ]);
    expect(problems.every((problem) => problem.message.startsWith("coworker/tools.json: field "))).toBe(true);
    // The entries that parsed, so tools check can resolve them and list their problems too.
    expect(error.details.selection).toEqual({ version: 3, tools: ["example.web_serch", "ok.tool", "nosuch.tool"] });
    expect(error.details).toMatchObject({ file: "coworker/tools.json", field: "tools[1]" });
  });

  it("B6 a single bad entry is thrown with its own code and message, and is itself details.problems", () => {
    const error = thrown(() => parseToolsJson('{"version":3,"tools":["example.a","notification"]}', "tools.json"));
    expect(error.code).toBe("NAME_NOT_QUALIFIED");
    expect(error.message).not.toContain("more problem");
    expect((error.details.problems as OpenWorkerError[]).map((problem) => problem.message)).toEqual([error.message]);
    expect(error.details.selection).toEqual({ version: 3, tools: ["example.a"] });
  });

  it("B6 reports every bad server and tool of a v2 file, and every bad server of a v1 file", () => {
    const v2 = thrown(() =>
      parseToolsJson(
        '{"version":2,"mcpServers":{"acer":["ok","a/b","ok"],"open worker":["x"],"empty":[],"text":"x","good":["fine"],"openworker":["y"]}}',
        "tools.json",
      ),
    );
    expect((v2.details.problems as OpenWorkerError[]).map((problem) => [problem.code, problem.details.field])).toEqual([
      ["NAME_INVALID_CHARACTER", "mcpServers.acer[1]"],
      ["TOOLS_JSON_DUPLICATE", "mcpServers.acer[2]"],
      ["NAMESPACE_INVALID", "mcpServers.open worker"],
      ["TOOLS_JSON_INVALID", "mcpServers.empty"],
      ["TOOLS_JSON_INVALID", "mcpServers.text"],
      ["NAMESPACE_RESERVED", "mcpServers.openworker"],
    ]);
    expect(v2.details.selection).toEqual({ version: 2, mcpServers: { acer: ["ok"], good: ["fine"] } });
    const v1 = thrown(() => parseToolsJson('{"version":1,"mcpServers":["acer","","acer","a.b"]}', "tools.json"));
    expect((v1.details.problems as OpenWorkerError[]).map((problem) => problem.details.field)).toEqual(["mcpServers[1]", "mcpServers[2]", "mcpServers[3]"]);
    expect(v1.message.endsWith("(and 2 more problems in this file)")).toBe(true);
  });

  it("B6 a broken document shape is still thrown alone: nothing to list entry by entry", () => {
    const error = thrown(() => parseToolsJson('{"version":3,"tools":"example.a"}', "tools.json"));
    expect(error.code).toBe("TOOLS_JSON_INVALID");
    expect(error.details.problems).toBeUndefined();
  });
});
