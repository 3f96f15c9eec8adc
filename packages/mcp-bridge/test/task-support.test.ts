import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES, type DiscoveryResult, type McpSession } from "../src/index.js";
import { everythingEntry, fixture } from "./helpers.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mcp-bridge-tasks-"));
const callLog = path.join(scratch, "calls.log");

let bridge: McpBridge;
let session: McpSession;
let discovery: DiscoveryResult;

beforeAll(async () => {
  bridge = new McpBridge(
    [{ transport: "stdio", namespace: "studio", program: process.execPath, args: [fixture("task-support.mjs")], env: { CALL_LOG: callLog } }],
    {
      closeGraceMs: 300,
    },
  );
  session = bridge.openSession("tasks");
  discovery = await session.discover(["studio"]);
  expect(discovery.unavailable).toEqual([]);
});

afterAll(async () => {
  await bridge.dispose();
  await bridge.joinCleanup();
  rmSync(scratch, { recursive: true, force: true });
});

const calls = (): string[] => (existsSync(callLog) ? readFileSync(callLog, "utf8").trim().split("\n") : []);

describe("tools that require MCP tasks (M7, M2)", () => {
  it('M7 M2 a tool with taskSupport "required" is not in the catalog a bundle selects from, and a diagnostic names it', () => {
    const catalog = discovery.catalogs[0]!;
    expect(catalog.tools.map((tool) => tool.name)).toEqual(["index_folder", "ping"]);
    expect(catalog.withheldTools).toEqual([{ name: "render_video", reason: expect.stringContaining('execution.taskSupport "required"') }]);
    expect(catalog.changedTools).toEqual(["index_folder", "ping"]);
    expect(discovery.diagnostics).toEqual([
      { namespace: "studio", message: expect.stringContaining('tool "render_video": it requires running as an MCP task') },
    ]);
  });

  it("M7 M2 the withheld tool cannot be called: the call fails unsent, as for any tool the catalog does not publish", async () => {
    const result = await session.callTool("studio", "render_video", {}, {});
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe(MCP_ERROR_CODES.toolNotPublished);
    expect(result.error?.message).toContain("published: index_folder, ping");
    expect(calls()).not.toContain("render_video");
  });

  it('M7 M2 tools with taskSupport "optional" and none are offered and called normally; the catalog says how each may run', async () => {
    const catalog = discovery.catalogs[0]!;
    expect(catalog.tools.map((tool) => tool.execution)).toEqual([{ taskSupport: "optional" }, undefined]);
    for (const name of ["index_folder", "ping"]) {
      const result = await session.callTool("studio", name, {}, {});
      expect(result.outcome).toBe("succeeded");
      expect(result.output?.text).toBe(`${name} done`);
    }
    expect(calls()).toEqual(["index_folder", "ping"]);
  });

  it("M7 M2 a catalog the session reuses keeps its withheld tools and their diagnostic", async () => {
    const again = await session.discover(["studio"]);
    expect(again.catalogs[0]?.fromCache).toBe(true);
    expect(again.catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["index_folder", "ping"]);
    expect(again.catalogs[0]?.withheldTools.map((tool) => tool.name)).toEqual(["render_video"]);
    expect(again.diagnostics.map((diagnostic) => diagnostic.message)).toEqual([expect.stringContaining('"render_video"')]);
  });

  it("M5 the inventory lists only the offered tools", () => {
    expect(bridge.inventory({ sessionId: "tasks" })?.tools.map((tool) => tool.toolName)).toEqual(["index_folder", "ping"]);
  });
});

describe("server-everything's task tool (M10)", () => {
  it('M10 M2 simulate-research-query (taskSupport "required") runs as an MCP task: started, polled with progress, its result fetched; one cancelled settles as cancelled', async () => {
    const everything = new McpBridge([{ transport: "stdio", namespace: "everything", program: process.execPath, args: [everythingEntry, "stdio"] }], {
      closeGraceMs: 500,
    });
    try {
      const tasks = everything.openSession("everything-tasks");
      // Its conditional tools (the task tool among them) are registered once the client's
      // capabilities are known, and announced with list_changed: the second discovery has them.
      await tasks.discover(["everything"]);
      const { catalogs } = await tasks.discover(["everything"]);
      expect(catalogs[0]?.withheldTools).toEqual([]);
      expect(catalogs[0]?.tools.find((tool) => tool.name === "simulate-research-query")?.execution).toEqual({ taskSupport: "required" });
      const progress: { message?: string }[] = [];
      const call = await tasks.callTool("everything", "simulate-research-query", { topic: "tasks" }, { onProgress: (event) => progress.push(event) });
      expect(call.outcome).toBe("succeeded");
      expect(call.output?.text).toContain("Research Report: tasks");
      expect(progress.map((event) => event.message)).toContainEqual(expect.stringMatching(/^task working/));
      expect(progress.at(-1)?.message).toMatch(/^task completed/);
      const controller = new AbortController();
      const cancelled = tasks.callTool(
        "everything",
        "simulate-research-query",
        { topic: "stopped" },
        { signal: controller.signal, onProgress: () => controller.abort() },
      );
      expect((await cancelled).outcome).toBe("cancelled");
      // The connection goes on.
      expect((await tasks.callTool("everything", "echo", { message: "after" }, {})).outcome).toBe("succeeded");
    } finally {
      await everything.dispose();
      await everything.joinCleanup();
    }
  });
});
