import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES } from "../src/index.js";
import { LocalService, TOKEN } from "./local-http-service.js";

const service = new LocalService();

beforeAll(async () => {
  await service.start();
});

afterAll(async () => {
  await service.stop();
});

const provider = (token: string) => ({
  transport: "streamable_http" as const,
  namespace: "local",
  url: service.url,
  headers: { Authorization: `Bearer ${token}` },
});

describe("streamable HTTP providers", () => {
  it("M1 discovers and calls a local streamable-HTTP service with its configured headers", async () => {
    const bridge = new McpBridge([provider(TOKEN)]);
    const session = bridge.openSession("http");
    const { catalogs, unavailable } = await session.discover(["local"]);
    expect(unavailable).toEqual([]);
    expect(catalogs[0]?.tools.map((tool) => tool.name).sort()).toEqual(["big", "drop", "echo", "hang"]);
    const result = await session.callTool("local", "echo", { text: "over http" }, {});
    expect(result.output?.text).toBe("over http");
    expect(service.sessions.size).toBe(1);
    await session.close();
    await session.joinCleanup();
    expect(service.sessions.size).toBe(0); // M4: the remote session was terminated
    await bridge.dispose();
  });

  it("E6 a refused connection is reported without the configured credentials", async () => {
    const wrong = "wrong-token-123456";
    const bridge = new McpBridge([provider(wrong)]);
    const { unavailable } = await bridge.openSession("refused").discover(["local"]);
    expect(unavailable[0]?.code).toBe(MCP_ERROR_CODES.connectFailed);
    expect(unavailable[0]?.message).toMatch(/authorization \(HTTP 401\)/);
    expect(unavailable[0]?.message).not.toContain(wrong);
    await bridge.dispose();
    await bridge.joinCleanup();
  });

  it("E6 a URL carrying credentials that reached the bridge without the registry is refused as invalid, naming none of them", async () => {
    const url = service.url.replace("http://", "http://svc-token-ABCDEF123:p%40ss-SECRET-999@");
    const bridge = new McpBridge([{ transport: "streamable_http", namespace: "local", url, headers: { Authorization: `Bearer ${TOKEN}` } }]);
    const { unavailable } = await bridge.openSession("url-credentials").discover(["local"]);
    expect(unavailable[0]?.code).toBe(MCP_ERROR_CODES.providerInvalid);
    expect(unavailable[0]?.message).toContain('pass them in "headers" instead');
    for (const secret of ["svc-token-ABCDEF123", "p%40ss-SECRET-999", "p@ss-SECRET-999"]) expect(unavailable[0]?.message).not.toContain(secret);
    expect(service.sessions.size).toBe(0);
    await bridge.dispose();
    await bridge.joinCleanup();
  });

  it("M4 a remote session that cannot be terminated makes joinCleanup reject, for every later caller too", async () => {
    const bridge = new McpBridge([provider(TOKEN)]);
    const session = bridge.openSession("stuck");
    await session.discover(["local"]);
    service.failDelete = true;
    try {
      await bridge.dispose();
      await expect(session.joinCleanup()).rejects.toMatchObject({ code: MCP_ERROR_CODES.cleanupUnconfirmed });
      await expect(bridge.joinCleanup()).rejects.toMatchObject({
        code: MCP_ERROR_CODES.cleanupUnconfirmed,
        message: expect.stringContaining('provider "local"'),
      });
      await expect(bridge.joinCleanup()).rejects.toMatchObject({ code: MCP_ERROR_CODES.cleanupUnconfirmed });
    } finally {
      service.failDelete = false;
    }
  });

  it("E3 an HTTP answer over maxMessageBytes is dropped as it streams in and its call fails at once as a limit breach", async () => {
    const bridge = new McpBridge([provider(TOKEN)], { maxMessageBytes: 256 * 1024 });
    const session = bridge.openSession("big");
    await session.discover(["local"]);
    const started = Date.now();
    const result = await session.callTool("local", "big", {}, { timeoutMs: 60_000 });
    expect(result).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "resultBytes" } });
    expect(result.error?.message).toContain("over the 262144-byte message bound");
    // Answered by the bound, not by the call's 60 s time bound.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await session.callTool("local", "echo", { text: "still here" }, {})).output?.text).toBe("still here");
    await bridge.dispose();
  });

  it("E4 a service dropping the connection mid-call fails the call as crashed; the next discovery reconnects", async () => {
    const bridge = new McpBridge([provider(TOKEN)]);
    const session = bridge.openSession("drop");
    await session.discover(["local"]);
    const result = await session.callTool("local", "drop", {}, {});
    expect(result.outcome).toBe("crashed");
    expect(result.error?.code).toBe(MCP_ERROR_CODES.providerUnreachable);
    expect(result.error?.message).not.toContain(TOKEN);
    const again = await session.discover(["local"]);
    expect(again.unavailable).toEqual([]);
    expect((await session.callTool("local", "echo", { text: "back" }, {})).output?.text).toBe("back");
    await bridge.dispose();
  });
});
