import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** The bearer token `LocalService` requires. */
export const TOKEN = "s3cr3t-token-value";

/** A real streamable-HTTP MCP service on 127.0.0.1, port 0, that requires a bearer token. */
export class LocalService {
  readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  failDelete = false;
  /** Calls of `hang` the service is running, and how many of them the client cancelled. */
  readonly hang = { started: 0, cancelled: 0 };
  /** The HTTP method of every request whose connection closed before the service had answered it in full. */
  readonly unfinished: string[] = [];
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
    response.on("close", () => {
      if (!response.writableFinished) this.unfinished.push(request.method ?? "");
    });
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
    server.registerTool("big", { description: "Answers with about 600 KB of text.", inputSchema: {} }, async () => ({
      content: [{ type: "text", text: "x".repeat(600 * 1024) }],
    }));
    server.registerTool("drop", { description: "The service drops the connection.", inputSchema: {} }, async () => {
      request.socket.destroy();
      this.server?.closeAllConnections();
      return new Promise(() => {});
    });
    // Never answers, even once cancelled: the call's event stream stays open until the client ends it.
    server.registerTool("hang", { description: "Never answers.", inputSchema: {} }, async (_args, extra) => {
      this.hang.started++;
      extra.signal.addEventListener("abort", () => this.hang.cancelled++, { once: true });
      return new Promise(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  }
}
