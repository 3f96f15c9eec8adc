import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES } from "../src/index.js";

/**
 * A hand-written streamable-HTTP MCP service on 127.0.0.1 (the SDK's own server will not
 * misbehave so): JSON answers, GET refused with 405 (no standalone event stream), and
 * tools whose POST is answered without their answer: `wrong_id` with JSON for another id,
 * `accepted` with 202 and no body; `ok` is answered properly.
 */
class NoAnswerService {
  private server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    const server = createServer((request, response) => this.handle(request, response));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    if (request.method === "GET") return void response.writeHead(405).end();
    if (request.method === "DELETE") return void response.writeHead(200).end();
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string; name?: string } };
      if (message.id === undefined) return void response.writeHead(202).end();
      const reply = (id: number, result: unknown) => {
        response.writeHead(200, { "content-type": "application/json", "mcp-session-id": "session-1" });
        response.end(JSON.stringify({ jsonrpc: "2.0", id, result }));
      };
      if (message.method === "initialize") {
        return reply(message.id, {
          protocolVersion: message.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "no-answer", version: "1.0.0" },
        });
      }
      if (message.method === "tools/list") {
        return reply(message.id, { tools: ["wrong_id", "accepted", "ok"].map((name) => ({ name, inputSchema: { type: "object" } })) });
      }
      if (message.method === "tools/call" && message.params?.name === "wrong_id")
        return reply(424242, { content: [{ type: "text", text: "for someone else" }] });
      if (message.method === "tools/call" && message.params?.name === "accepted") return void response.writeHead(202).end();
      if (message.method === "tools/call") return reply(message.id, { content: [{ type: "text", text: "answered" }] });
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } }));
    });
  }
}

const service = new NoAnswerService();

beforeAll(async () => {
  await service.start();
});

afterAll(async () => {
  await service.stop();
});

describe("an HTTP call whose POST is answered without its answer", () => {
  it.each([
    ["wrong_id", "held no answer to it"],
    ["accepted", "202 Accepted"],
  ])("E1 E4 %s fails at once as a provider fault (MCP_RESULT_INVALID), not at its time bound; the connection goes on", async (tool, words) => {
    const bridge = new McpBridge([{ transport: "streamable_http", namespace: "quiet", url: service.url }], { closeGraceMs: 500 });
    try {
      const session = bridge.openSession(`no-answer-${tool}`);
      const { unavailable } = await session.discover(["quiet"]);
      expect(unavailable).toEqual([]);
      // A bound far past this test's timeout: without the fix the call waits it out.
      const result = await session.callTool("quiet", tool, {}, { timeoutMs: 70_000 });
      expect(result.outcome).toBe("crashed");
      expect(result.error?.code).toBe(MCP_ERROR_CODES.resultInvalid);
      expect(result.error?.message).toContain(words);
      expect(result.error?.message).toContain("may have had effects; it was not replayed");
      expect((await session.callTool("quiet", "ok", {}, {})).output?.text).toBe("answered");
    } finally {
      await bridge.dispose();
      await bridge.joinCleanup();
    }
  });
});
