import { createServer } from "node:net";
import type { McpProviderDefinition } from "@openworker/registry";
import { afterAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES, type McpBridgeOptions, type McpProviderStartEvent } from "../src/index.js";
import { fixture, marker, processesWithMarker } from "./helpers.js";

const tag = marker("provider-bounds");

afterAll(() => {
  expect(processesWithMarker(tag)).toEqual([]);
});

/** The slow-start fixture: it reads stdin only after 1 s. */
const slow = (bounds: { connectTimeoutMs?: number; callTimeoutMs?: number } = {}): McpProviderDefinition => ({
  transport: "stdio",
  namespace: "big",
  program: process.execPath,
  args: [fixture("slow-start.mjs")],
  env: { TEST_MARKER: tag, START_DELAY_MS: "1000" },
  ...bounds,
});

async function withBridge<T>(providers: readonly McpProviderDefinition[], options: McpBridgeOptions, work: (bridge: McpBridge) => Promise<T>): Promise<T> {
  const bridge = new McpBridge(providers, { closeGraceMs: 300, ...options });
  try {
    return await work(bridge);
  } finally {
    await bridge.dispose();
    await bridge.joinCleanup();
  }
}

/** A port on 127.0.0.1 nothing listens on: bound, read, closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("each provider's own bounds (M10)", () => {
  it("M1 M10 a provider's connectTimeoutMs bounds its start, and the failure names the bound", async () => {
    const { catalogs, unavailable } = await withBridge([slow({ connectTimeoutMs: 300 })], {}, (bridge) => bridge.openSession("short").discover(["big"]));
    expect(catalogs).toEqual([]);
    expect(unavailable).toEqual([
      expect.objectContaining({
        namespace: "big",
        code: MCP_ERROR_CODES.connectTimeout,
        message: expect.stringContaining(
          "did not finish initialize within 300 ms (its connect bound: for a provider that starts slowly, raise connectTimeoutMs",
        ),
      }),
    ]);
  });

  it("M1 M10 a provider's connectTimeoutMs raises the bridge's bound for a provider that starts slowly", async () => {
    const { catalogs, unavailable } = await withBridge([slow({ connectTimeoutMs: 5_000 })], { connectTimeoutMs: 300 }, (bridge) =>
      bridge.openSession("long").discover(["big"]),
    );
    expect(unavailable).toEqual([]);
    expect(catalogs[0]?.tools.map((tool) => tool.name).sort()).toEqual(["ping", "wait"]);
  });

  it("M10 a provider's callTimeoutMs bounds its calls, and a caller's timeoutMs only lowers it", async () => {
    await withBridge([slow({ callTimeoutMs: 400 })], {}, async (bridge) => {
      const session = bridge.openSession("calls");
      expect((await session.discover(["big"])).unavailable).toEqual([]);
      const late = await session.callTool("big", "wait", { ms: 5_000 }, {});
      expect(late).toMatchObject({ outcome: "timed_out", error: { message: expect.stringContaining("ran past its 400 ms bound") } });
      // Asking for more than the provider's bound gets the provider's bound.
      const asked = await session.callTool("big", "wait", { ms: 5_000 }, { timeoutMs: 60_000 });
      expect(asked.error?.message).toContain("ran past its 400 ms bound");
      expect(await session.callTool("big", "wait", { ms: 10 }, {})).toMatchObject({ outcome: "succeeded" });
    });
  });

  it("M1 M10 onProviderStart hears a provider's start begin and end, with its launch and bound", async () => {
    const events: McpProviderStartEvent[] = [];
    await withBridge([slow({ connectTimeoutMs: 5_000 })], { onProviderStart: (event) => events.push(event) }, (bridge) =>
      bridge.openSession("events").discover(["big"]),
    );
    expect(events.map((event) => event.phase)).toEqual(["connecting", "connected"]);
    expect(events[0]).toMatchObject({ namespace: "big", connectTimeoutMs: 5_000, launch: expect.stringMatching(/^node\S* \S*slow-start\.mjs$/) });
  });

  it('M1 a throwing onProviderStart listener never fails the start; a failed start ends with "failed"', async () => {
    const phases: string[] = [];
    const onProviderStart = (event: McpProviderStartEvent) => {
      phases.push(event.phase);
      throw new Error("display broke");
    };
    const { unavailable } = await withBridge([slow({ connectTimeoutMs: 300 })], { onProviderStart }, (bridge) =>
      bridge.openSession("throwing").discover(["big"]),
    );
    expect(unavailable[0]?.code).toBe(MCP_ERROR_CODES.connectTimeout);
    expect(phases).toEqual(["connecting", "failed"]);
  });
});

describe("an unreachable streamable-HTTP provider says where and why (E6)", () => {
  it("E6 a refused connection names the redacted URL and ECONNREFUSED, never the query's secret", async () => {
    const port = await closedPort();
    const secret = "wiki-query-secret-4711";
    const provider: McpProviderDefinition = { transport: "streamable_http", namespace: "wiki", url: `http://127.0.0.1:${port}/mcp?token=${secret}` };
    const { unavailable } = await withBridge([provider], {}, (bridge) => bridge.openSession("down").discover(["wiki"]));
    expect(unavailable).toHaveLength(1);
    expect(unavailable[0]!.code).toBe(MCP_ERROR_CODES.providerUnreachable);
    expect(unavailable[0]!.message).toBe(
      `MCP provider "wiki" at http://127.0.0.1:${port}/mcp?token=[redacted] is unreachable: connection refused (ECONNREFUSED); its tools are unavailable this turn`,
    );
    expect(unavailable[0]!.message).not.toContain(secret);
    expect(unavailable[0]!.message).not.toContain("fetch failed");
  });

  it("E6 a host name DNS cannot resolve is named as such", async () => {
    const provider: McpProviderDefinition = {
      transport: "streamable_http",
      namespace: "wiki",
      url: "http://openworker-no-such-host.invalid/mcp",
      allowRemote: true,
    };
    const { unavailable } = await withBridge([provider], {}, (bridge) => bridge.openSession("dns").discover(["wiki"]));
    expect(unavailable[0]?.code).toBe(MCP_ERROR_CODES.providerUnreachable);
    expect(unavailable[0]?.message).toMatch(
      /^MCP provider "wiki" at http:\/\/openworker-no-such-host\.invalid\/mcp is unreachable: host name (not found|lookup failed for now) \(DNS\) \((ENOTFOUND|EAI_AGAIN)\)/,
    );
  });
});
