import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES } from "../src/index.js";
import { eventually, fixture, marker, processesWithMarker } from "./helpers.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mcp-bridge-cancel-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// A provider slow to start (1.5 s before it becomes the sh MCP server), which leaves
// $READY once past its slow part and carries $TEST_MARKER so a test can find its tree.
const slowProvider = (env: Record<string, string>) => ({
  transport: "stdio" as const,
  namespace: "slow",
  program: "/bin/sh",
  args: ["-c", 'sleep 1.5; [ -n "$READY" ] && : > "$READY"; exec "$0"', fixture("sandbox-probe.sh")],
  env,
});

describe("cancelling a discovery (M2, M4)", () => {
  it("M2 a discovery cancelled while it re-lists leaves the session's catalog: calls in flight and after are sent", async () => {
    const bridge = new McpBridge([{ transport: "stdio", namespace: "relist", program: fixture("slow-relist.sh"), args: [] }]);
    try {
      const session = bridge.openSession("relist");
      expect((await session.discover(["relist"])).catalogs).toHaveLength(1);
      const caller = new AbortController();
      const relisting = session.discover(["relist"], { signal: caller.signal });
      await new Promise((resolve) => setTimeout(resolve, 100));
      caller.abort(new Error("the host gave up"));
      expect((await relisting).unavailable).toEqual([expect.objectContaining({ code: MCP_ERROR_CODES.discoveryCancelled })]);
      // The provider was never down: its tools stay callable.
      const call = await session.callTool("relist", "ping", {}, {});
      expect({ outcome: call.outcome, code: call.error?.code }).toEqual({ outcome: "succeeded", code: undefined });
      expect(session.connected("relist")).toBe(true);
    } finally {
      await bridge.dispose();
    }
  });

  it("M4 a discovery cancelled before it began starts nothing", async () => {
    const started = path.join(scratch, "never");
    const bridge = new McpBridge([{ transport: "stdio", namespace: "probe", program: fixture("sandbox-probe.sh"), args: [], env: { STARTED_FILE: started } }]);
    try {
      const session = bridge.openSession("pre-aborted");
      const { unavailable } = await session.discover(["probe"], { signal: AbortSignal.abort() });
      expect(unavailable).toEqual([
        { namespace: "probe", code: MCP_ERROR_CODES.discoveryCancelled, message: expect.stringContaining("cancelled before it began") },
      ]);
      await session.close();
      expect(existsSync(started)).toBe(false);
    } finally {
      await bridge.dispose();
    }
  });

  it("M2 two discoveries share one start: the one that cancels returns at once, the other gets the catalog", async () => {
    const ready = path.join(scratch, "shared-ready");
    const bridge = new McpBridge([slowProvider({ READY: ready })]);
    try {
      const session = bridge.openSession("shared");
      const caller = new AbortController();
      let readyWhenCancelled: boolean | undefined;
      const impatient = session.discover(["slow"], { signal: caller.signal }).then((result) => ((readyWhenCancelled = existsSync(ready)), result));
      const patient = session.discover(["slow"]);
      setTimeout(() => caller.abort(), 100);
      expect((await impatient).unavailable[0]?.code).toBe(MCP_ERROR_CODES.discoveryCancelled);
      expect(readyWhenCancelled).toBe(false);
      expect((await patient).catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["where"]);
      await session.close();
      await session.joinCleanup();
    } finally {
      await bridge.dispose();
    }
  });

  it("M4 when every discovery waiting for a start cancels, the start is abandoned and its process tree ended", async () => {
    const tag = marker("abandoned");
    const bridge = new McpBridge([slowProvider({ TEST_MARKER: tag })], { closeGraceMs: 200 });
    try {
      const session = bridge.openSession("abandoned");
      const callers = [new AbortController(), new AbortController()];
      const discoveries = callers.map((caller) => session.discover(["slow"], { signal: caller.signal }));
      await eventually(() => (processesWithMarker(tag).length > 0 ? true : undefined));
      for (const caller of callers) caller.abort();
      for (const discovery of discoveries) expect((await discovery).unavailable[0]?.code).toBe(MCP_ERROR_CODES.discoveryCancelled);
      // Ended without waiting for the session to close.
      await eventually(() => (processesWithMarker(tag).length === 0 ? true : undefined));
      expect(session.connected("slow")).toBe(false);
      await session.close();
      await session.joinCleanup();
    } finally {
      await bridge.dispose();
    }
  });

  it("M2 a discovery that comes just as the last caller abandons a start begins a new one and gets the catalog", async () => {
    const tag = marker("restart");
    const bridge = new McpBridge([slowProvider({ TEST_MARKER: tag })], { closeGraceMs: 200 });
    try {
      const session = bridge.openSession("restart");
      const caller = new AbortController();
      const abandoned = session.discover(["slow"], { signal: caller.signal });
      await eventually(() => (processesWithMarker(tag).length > 0 ? true : undefined));
      caller.abort();
      const fresh = session.discover(["slow"]); // same tick as the abort
      expect((await abandoned).unavailable[0]?.code).toBe(MCP_ERROR_CODES.discoveryCancelled);
      const { catalogs, unavailable } = await fresh;
      expect(unavailable).toEqual([]);
      expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["where"]);
      expect((await session.callTool("slow", "where", {}, {})).output?.text).toBe("sandboxed=no");
      await session.close();
      await session.joinCleanup();
      expect(processesWithMarker(tag)).toEqual([]);
    } finally {
      await bridge.dispose();
    }
  });
});
