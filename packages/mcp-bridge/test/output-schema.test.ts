import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { McpProviderDefinition } from "@openworker/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES, type McpSession } from "../src/index.js";
import { fixture } from "./helpers.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mcp-bridge-output-"));
const callLog = path.join(scratch, "calls.log");
const methodLog = path.join(scratch, "methods.log");
const servingLog = path.join(scratch, "serving.log");

const providers: McpProviderDefinition[] = [
  { transport: "stdio", namespace: "weather", program: process.execPath, args: [fixture("output-schema.mjs")], env: { CALL_LOG: callLog } },
  { transport: "stdio", namespace: "prompts", program: process.execPath, args: [fixture("no-tools-capability.mjs")], env: { METHOD_LOG: methodLog } },
  {
    transport: "stdio",
    namespace: "undeclared",
    program: process.execPath,
    args: [fixture("no-tools-capability.mjs")],
    env: { METHOD_LOG: servingLog, SERVES_TOOLS: "1" },
  },
];

let bridge: McpBridge;
let session: McpSession;

beforeAll(async () => {
  bridge = new McpBridge(providers, { closeGraceMs: 300 });
  session = bridge.openSession("output");
  const { unavailable } = await session.discover(["weather"]);
  expect(unavailable).toEqual([]);
});

afterAll(async () => {
  await bridge.dispose();
  await bridge.joinCleanup();
  rmSync(scratch, { recursive: true, force: true });
});

const calls = (): string[] => readFileSync(callLog, "utf8").trim().split("\n");

describe("a tool's outputSchema (as the SDK Client enforces it)", () => {
  it("E3 structuredContent that breaks the outputSchema fails the call, naming the tool and the JSON pointer", async () => {
    const result = await session.callTool("weather", "violates", {}, {});
    expect(result.outcome).toBe("failed"); // a tool failure the model is told about, not a fault
    expect(result.error?.code).toBe(MCP_ERROR_CODES.outputInvalid);
    expect(result.error?.message).toContain('MCP tool "violates" of provider "weather"');
    expect(result.error?.message).toContain("/structuredContent/temp");
    expect(result.error?.message).toContain("must be number");
    expect(result.output).toBeUndefined();
  });

  it("E3 a nested problem is located by its JSON pointer", async () => {
    const result = await session.callTool("weather", "nested", {}, {});
    expect(result.error?.code).toBe(MCP_ERROR_CODES.outputInvalid);
    expect(result.error?.message).toContain("/structuredContent/days/2");
    expect(result.error?.message).toContain('"wind"');
  });

  it("E3 a result without structuredContent from a tool with an outputSchema fails the call", async () => {
    const result = await session.callTool("weather", "missing_structured", {}, {});
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe(MCP_ERROR_CODES.outputInvalid);
    expect(result.error?.message).toContain('MCP tool "missing_structured" of provider "weather"');
    expect(result.error?.message).toContain("no structuredContent");
  });

  it("T3 a conforming result, a tool error and a tool without outputSchema are unchanged", async () => {
    expect(await session.callTool("weather", "conforms", {}, {})).toMatchObject({ outcome: "succeeded", output: { json: { temp: 21 } } });
    expect(await session.callTool("weather", "fails", {}, {})).toMatchObject({
      outcome: "failed",
      error: { code: MCP_ERROR_CODES.toolError, message: "sensor offline" },
    });
    expect(await session.callTool("weather", "no_schema", {}, {})).toMatchObject({ outcome: "succeeded", output: { json: { anything: true } } });
  });

  it("E3 a tool whose outputSchema does not compile is not called: its result could not be checked", async () => {
    const result = await session.callTool("weather", "broken_schema", {}, {});
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe(MCP_ERROR_CODES.outputInvalid);
    expect(result.error?.message).toContain("outputSchema");
    expect(result.error?.message).toContain("was not called");
    expect(calls()).not.toContain("broken_schema");
  });
});

describe("capabilities", () => {
  it("M2 a server that declares no tools capability and answers tools/list 'method not found' has an empty catalog, not a provider that is down", async () => {
    const own = bridge.openSession("prompts-only");
    const { catalogs, unavailable } = await own.discover(["prompts"]);
    expect(unavailable).toEqual([]);
    expect(catalogs).toMatchObject([{ namespace: "prompts", tools: [] }]);
    expect(own.connected("prompts")).toBe(true);
    expect(readFileSync(methodLog, "utf8").trim().split("\n")).toEqual(["server/discover", "initialize", "notifications/initialized", "tools/list"]);
    expect((await own.callTool("prompts", "anything", {}, {})).error?.code).toBe(MCP_ERROR_CODES.toolNotPublished);
    await own.close();
  });

  it("M2 a server that serves tools without declaring the capability keeps them (the SDK's Client lists it too)", async () => {
    const own = bridge.openSession("undeclared");
    const { catalogs, unavailable } = await own.discover(["undeclared"]);
    expect(unavailable).toEqual([]);
    expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["undeclared"]);
    await own.close();
  });
});
