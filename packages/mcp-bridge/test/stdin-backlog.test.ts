import { describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES, type McpSession } from "../src/index.js";
import { fixture, marker, processesWithMarker } from "./helpers.js";

/**
 * Runs `body` with a discovered session of one stdio provider (the fixture `script`, run
 * by node, as `namespace`), then closes it and checks that none of its processes is left (M4).
 */
async function withProvider(namespace: string, script: string, body: (session: McpSession) => Promise<void>): Promise<void> {
  const tag = marker(namespace);
  const bridge = new McpBridge([{ transport: "stdio", namespace, program: process.execPath, args: [fixture(script)], env: { TEST_MARKER: tag } }], {
    closeGraceMs: 300,
  });
  try {
    const session = bridge.openSession(namespace);
    expect((await session.discover([namespace])).catalogs.map((catalog) => catalog.namespace)).toEqual([namespace]);
    await body(session);
    await session.close();
    await session.joinCleanup();
    expect(processesWithMarker(tag)).toEqual([]);
  } finally {
    await bridge.dispose();
  }
}

describe("a provider that stops reading its stdin", () => {
  it("M4 E4 its stdin backlog is bounded: past maxStdinBacklogBytes the call fails MCP_PROVIDER_CRASHED and the tree is ended", async () => {
    await withProvider("stall", "stdin-stall.mjs", async (session) => {
      // The server floods pings and never reads their answers; without the bound they pile up
      // in the host (48 MiB here, without end from a server that floods for ever) and the call
      // waits out its bound (longer than this test's timeout).
      const result = await session.callTool("stall", "stall", {}, { timeoutMs: 60_000 });
      expect(result.outcome).toBe("crashed");
      expect(result.error?.code).toBe(MCP_ERROR_CODES.providerCrashed);
      expect(result.error?.message).toContain("stopped reading its stdin");
      expect(result.error?.message).toContain(`over the ${4 * 1024 * 1024}-byte bound`);
      expect(result.error?.message).toContain("took none of them");
      expect(session.connected("stall")).toBe(false);
      // A later call is not sent: the connection is gone until the next discovery.
      const later = await session.callTool("stall", "stall", {}, {});
      expect(later.error?.code).toBe(MCP_ERROR_CODES.providerUnavailable);
    });
  }, 30_000);

  it("M4 E4 a provider that closes its stdin while still running fails the next call at once as crashed, saying so, and is ended", async () => {
    await withProvider("closer", "stdin-closer.mjs", async (session) => {
      // The first write after the close meets EPIPE; without the check the call would wait
      // out its bound (longer than this test's timeout) for an answer that cannot come.
      const result = await session.callTool("closer", "never_reached", {}, { timeoutMs: 60_000 });
      expect(result.outcome).toBe("crashed");
      expect(result.error?.code).toBe(MCP_ERROR_CODES.providerCrashed);
      expect(result.error?.message).toContain("closed its stdin while still running");
    });
  }, 30_000);

  it("M4 E4 a provider that reads, only slower than the host writes, is never taken for stalled: a 6 MiB argument and 40 calls of 250 KiB all succeed", async () => {
    await withProvider("echo", "line-echo.mjs", async (session) => {
      // Over the 4 MiB bound at once, then a small call while it still waits to be written.
      const large = session.callTool("echo", "size", { data: "x".repeat(6 * 1024 * 1024) }, {});
      await new Promise((resolve) => setImmediate(resolve));
      const small = session.callTool("echo", "size", {}, {});
      const many: Promise<{ outcome: string }>[] = [];
      for (let index = 0; index < 40; index += 1) {
        many.push(session.callTool("echo", "size", { data: "y".repeat(250 * 1024) }, {}));
        await new Promise((resolve) => setImmediate(resolve));
      }
      const outcomes = (await Promise.all([large, small, ...many])).map((result) => result.outcome);
      expect(outcomes.filter((outcome) => outcome !== "succeeded")).toEqual([]);
    });
  }, 30_000);
});
