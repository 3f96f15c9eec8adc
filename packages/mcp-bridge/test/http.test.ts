import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { McpBridge, MCP_ERROR_CODES } from "../src/index.js";

const TOKEN = "s3cr3t-token-value";

/** A real streamable-HTTP MCP service on 127.0.0.1, port 0, that requires a bearer token. */
class LocalService {
  readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  failDelete = false;
  private server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    const server = createServer((request, response) => void this.handle(request, response));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  }

  async stop(): Promise<void> {
    for (const transport of this.sessions.values()) await transport.close();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.headers.authorization !== `Bearer ${TOKEN}`) {
      // A careless service that echoes what it received: the bridge must not repeat it (E6).
      response.writeHead(401, { "content-type": "text/plain" }).end(`unauthorized: got ${String(request.headers.authorization)}`);
      return;
    }
    const sessionId = request.headers["mcp-session-id"];
    if (request.method === "DELETE" && this.failDelete) {
      response.writeHead(500).end("cannot terminate right now");
      return;
    }
    const existing = typeof sessionId === "string" ? this.sessions.get(sessionId) : undefined;
    if (existing) {
      await existing.handleRequest(request, response);
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    const server = new McpServer({ name: "local-service", version: "1.0.0" });
    server.registerTool("echo", { description: "Echoes.", inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: "text", text }] }));
    server.registerTool("big", { description: "Answers with about 600 KB of text.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: "x".repeat(600 * 1024) }] }));
    server.registerTool("drop", { description: "The service drops the connection.", inputSchema: {} }, async () => {
      request.socket.destroy();
      this.server?.closeAllConnections();
      return new Promise(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  }
}

const service = new LocalService();

beforeAll(async () => {
  await service.start();
});

afterAll(async () => {
  await service.stop();
});

const provider = (token: string) => ({ transport: "streamable_http" as const, namespace: "local", url: service.url, headers: { Authorization: `Bearer ${token}` } });

describe("streamable HTTP providers", () => {
  it("M1 discovers and calls a local streamable-HTTP service with its configured headers", async () => {
    const bridge = new McpBridge([provider(TOKEN)]);
    const session = bridge.openSession("http");
    const { catalogs, unavailable } = await session.discover(["local"]);
    expect(unavailable).toEqual([]);
    expect(catalogs[0]?.tools.map((tool) => tool.name).sort()).toEqual(["big", "drop", "echo"]);
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
    expect(unavailable[0]?.message).toContain("401");
    expect(unavailable[0]?.message).toContain("[redacted]");
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
      await expect(bridge.joinCleanup()).rejects.toMatchObject({ code: MCP_ERROR_CODES.cleanupUnconfirmed, message: expect.stringContaining('provider "local"') });
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
