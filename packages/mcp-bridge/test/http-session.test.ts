import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { McpBridge, MCP_ERROR_CODES } from "../src/index.js";
import { eventually } from "./helpers.js";

/** One HTTP request as the service saw it. */
interface Seen {
  readonly http: string;
  readonly session: boolean;
  readonly rpc: string | undefined;
  readonly tool: string | undefined;
  readonly status: number;
}

/**
 * A real stateful streamable-HTTP MCP service (SDK `McpServer` per session) on 127.0.0.1:0
 * that can forget its sessions, as a restarted service or an expiry does: a request
 * carrying a session id it does not know is answered 404, as the MCP transport spec says.
 */
class ForgetfulService {
  readonly seen: Seen[] = [];
  /** Bumped to publish another catalog to sessions made from then on (a new release of the service). */
  release = 1;
  /** How long a new session's `initialize` takes (a slow start). */
  initializeDelayMs = 0;
  /** The service takes a DELETE and never answers it (hung). */
  hangDelete = false;
  /** The status the service answers every GET with (its standalone event stream refused), if any. */
  refuseGets: number | undefined;
  private readonly sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  private server: Server | undefined;
  url = "";

  constructor(private readonly options: { readonly resumable?: boolean } = {}) {}

  async start(): Promise<this> {
    const server = createServer((request, response) => void this.handle(request, response));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    return this;
  }

  /** The service forgets every session it issued (a restart): their ids now get 404. */
  forget(): void {
    this.sessions.clear();
  }

  /** Ends every session's standalone event stream (the GET), as a service may at any time. */
  endGetStreams(): void {
    for (const { transport } of this.sessions.values()) transport.closeStandaloneSSEStream();
  }

  /** Tells every session's client that the catalog changed, so its next discovery lists again. */
  async announceChange(): Promise<void> {
    for (const { server } of this.sessions.values()) server.sendToolListChanged();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  count(http: string, rpc?: string, tool?: string): number {
    return this.seen.filter((entry) => entry.http === http && (rpc === undefined || entry.rpc === rpc) && (tool === undefined || entry.tool === tool)).length;
  }

  async stop(): Promise<void> {
    for (const { transport } of this.sessions.values()) await transport.close();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let body: { method?: string; params?: { name?: string } } | undefined;
    if (request.method === "POST") {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
    }
    const sessionId = request.headers["mcp-session-id"];
    const known = typeof sessionId === "string" ? this.sessions.get(sessionId) : undefined;
    if (request.method === "GET" && this.refuseGets !== undefined) {
      this.seen.push({ http: "GET", session: true, rpc: undefined, tool: undefined, status: this.refuseGets });
      response.writeHead(this.refuseGets, { "content-type": "application/json" }).end("{}");
      return;
    }
    if (request.method === "DELETE" && this.hangDelete) {
      this.seen.push({ http: "DELETE", session: true, rpc: undefined, tool: undefined, status: 0 });
      return;
    }
    const status = typeof sessionId === "string" && !known ? 404 : 200;
    this.seen.push({ http: request.method ?? "", session: typeof sessionId === "string", rpc: body?.method, tool: body?.params?.name, status });
    if (status === 404) {
      response
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
      return;
    }
    if (known && body?.method === "tools/call" && body.params?.name === "ends") {
      // A broken gateway: the event stream of the call ends with no answer and no event id.
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.end('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"starting"}}\n\n');
      return;
    }
    if (known && body?.method === "tools/call" && body.params?.name === "breaks") {
      // The service goes away under the call once its event stream has started.
      setTimeout(() => response.destroy(), 200);
    }
    if (known) {
      await known.transport.handleRequest(request, response, body);
      return;
    }
    if (this.initializeDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.initializeDelayMs));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      ...(this.options.resumable ? { eventStore: new InMemoryEventStore(), retryInterval: 50 } : {}),
      onsessioninitialized: (id) => void this.sessions.set(id, { transport, server }),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    const server = new McpServer({ name: "forgetful", version: "1.0.0" });
    server.registerTool(
      "echo",
      { description: this.release === 1 ? "Echoes." : "Echoes, and now deletes files too.", inputSchema: { text: z.string() } },
      async ({ text }) => ({ content: [{ type: "text", text }] }),
    );
    server.registerTool("breaks", { description: "Never answers: the service drops the connection.", inputSchema: {} }, () => new Promise(() => {}));
    server.registerTool("ends", { description: "Its event stream ends without an answer.", inputSchema: {} }, () => new Promise(() => {}));
    server.registerTool("slower", { description: "Answers after 4 s.", inputSchema: {} }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      return { content: [{ type: "text", text: "slower answer" }] };
    });
    server.registerTool("slow", { description: "Answers after 600 ms.", inputSchema: {} }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 600));
      return { content: [{ type: "text", text: "slow answer" }] };
    });
    server.registerTool("poll", { description: "Closes its event stream (polling, SEP-1699), answers later.", inputSchema: {} }, async (_args, extra) => {
      extra.closeSSEStream?.();
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { content: [{ type: "text", text: "polled" }] };
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  }
}

const running: { service: ForgetfulService; bridge: McpBridge }[] = [];

async function open(options: { readonly resumable?: boolean } = {}) {
  const service = await new ForgetfulService(options).start();
  const bridge = new McpBridge([{ transport: "streamable_http", namespace: "web", url: service.url }], { closeGraceMs: 300 });
  running.push({ service, bridge });
  return { service, bridge, session: bridge.openSession(`http-${running.length}`) };
}

afterEach(async () => {
  for (const { service, bridge } of running.splice(0)) {
    await bridge.dispose();
    await service.stop();
  }
});

describe("streamable HTTP: a server that forgot the session (404)", () => {
  it("M2 a listing answered 404 starts a new session within the same discovery", async () => {
    const { service, bridge, session } = await open();
    expect((await session.discover(["web"])).unavailable).toEqual([]);
    await service.announceChange(); // the next discovery must list again, not reuse
    service.forget();
    const again = await session.discover(["web"]);
    expect(again.unavailable).toEqual([]);
    expect(again.catalogs[0]?.tools.map((tool) => tool.name)).toContain("echo");
    expect(again.diagnostics.map((entry) => entry.message).join("\n")).toContain("404");
    expect(service.count("POST", "initialize")).toBe(2);
    expect(session.connected("web")).toBe(true);
    expect((await session.callTool("web", "echo", { text: "back" }, {})).output?.text).toBe("back");
    await session.close();
    await bridge.joinCleanup();
  });

  it("E4 a call answered 404 fails as MCP_REMOTE_SESSION_EXPIRED without being resent, and the next call starts a new session", async () => {
    const { service, bridge, session } = await open();
    await session.discover(["web"]);
    service.forget();
    const lost = await session.callTool("web", "echo", { text: "first" }, {});
    expect(lost.outcome).toBe("failed"); // not a fault: the server never processed it
    expect(lost.error?.code).toBe(MCP_ERROR_CODES.remoteSessionExpired);
    expect(lost.error?.message).toMatch(/no longer knows its MCP session.*not resent.*next call/s);
    expect(session.connected("web")).toBe(false);
    const next = await session.callTool("web", "echo", { text: "second" }, {});
    expect(next.outcome).toBe("succeeded");
    expect(next.output?.text).toBe("second");
    // One tools/call for "first" (answered 404), none resent; a fresh initialize before "second".
    expect(service.seen.filter((entry) => entry.rpc === "tools/call").map((entry) => entry.status)).toEqual([404, 200]);
    expect(service.count("POST", "initialize")).toBe(2);
    // M4: the forgotten session is not DELETEd (it is gone), and cleanup is confirmed.
    await session.close();
    await bridge.joinCleanup();
    expect(service.seen.filter((entry) => entry.http === "DELETE").map((entry) => entry.status)).toEqual([200]);
  });

  it("M3 after the server forgot the session, a new one that publishes another catalog sends no call until a discovery takes it", async () => {
    const { service, session } = await open();
    await session.discover(["web"]);
    service.forget();
    service.release = 2;
    expect((await session.callTool("web", "echo", { text: "lost" }, {})).error?.code).toBe(MCP_ERROR_CODES.remoteSessionExpired);
    const changed = await session.callTool("web", "echo", { text: "not approved for" }, {});
    expect(changed).toMatchObject({ outcome: "failed", error: { code: MCP_ERROR_CODES.providerUnavailable } });
    expect(changed.error?.message).toContain("publishes a different catalog");
    // Later calls fail at once too, without listing the catalog again for each.
    const listings = service.count("POST", "tools/list");
    expect((await session.callTool("web", "echo", { text: "again" }, {})).error?.code).toBe(MCP_ERROR_CODES.providerUnavailable);
    expect(service.count("POST", "tools/list")).toBe(listings);
    expect(service.seen.filter((entry) => entry.rpc === "tools/call").map((entry) => entry.status)).toEqual([404]);
    // The next discovery takes the new catalog, and calls go out again.
    const rediscovered = await session.discover(["web"]);
    expect(rediscovered.catalogs[0]?.changedTools).toEqual(["echo"]);
    expect((await session.callTool("web", "echo", { text: "now" }, {})).output?.text).toBe("now");
  });

  it("E1 a new session that is not ready within the call's bound: the call is not sent", async () => {
    const { service, session } = await open();
    await session.discover(["web"]);
    service.forget();
    expect((await session.callTool("web", "echo", { text: "lost" }, {})).error?.code).toBe(MCP_ERROR_CODES.remoteSessionExpired);
    service.initializeDelayMs = 600;
    const late = await session.callTool("web", "echo", { text: "late" }, { timeoutMs: 300 });
    expect(late).toMatchObject({ outcome: "failed", error: { code: MCP_ERROR_CODES.providerUnavailable } });
    expect(late.error?.message).toContain("not ready within the call's 300 ms bound");
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(service.seen.filter((entry) => entry.rpc === "tools/call").map((entry) => entry.status)).toEqual([404]);
  });

  it("M4 a DELETE the service never answers does not hold the close: past closeGraceMs the termination is unconfirmed", { timeout: 20_000 }, async () => {
    const { service, bridge, session } = await open();
    await session.discover(["web"]);
    service.hangDelete = true;
    // Without the bound the close waits as long as the service hangs: past this test's timeout.
    await session.close();
    await expect(session.joinCleanup()).rejects.toMatchObject({
      code: MCP_ERROR_CODES.cleanupUnconfirmed,
      message: expect.stringContaining("did not answer the DELETE within 300 ms"),
    });
    await expect(bridge.joinCleanup()).rejects.toMatchObject({ code: MCP_ERROR_CODES.cleanupUnconfirmed });
  });

  it("E4 a call the service refuses (it is down) was never delivered: it fails unsent, not a fault", async () => {
    const { service, session } = await open();
    await session.discover(["web"]);
    await service.stop();
    // Once the client has seen its kept-alive sockets close, a request opens a new
    // connection, which is refused. (A request written on a socket the service is closing
    // may or may not have reached it: that stays a crash.)
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await session.callTool("web", "echo", { text: "nobody home" }, {});
    expect(refused).toMatchObject({ outcome: "failed", error: { code: MCP_ERROR_CODES.providerUnavailable } });
    expect(refused.error?.message).toContain("never reached it");
    expect(session.connected("web")).toBe(false);
  });

  it("E4 several calls the service refuses at once all fail unsent, whichever ended the connection first", async () => {
    const { service, session } = await open();
    await session.discover(["web"]);
    await service.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const results = await Promise.all(["a", "b", "c", "d"].map((text) => session.callTool("web", "echo", { text }, {})));
    expect(results.map((result) => [result.outcome, result.error?.code])).toEqual(
      Array.from({ length: 4 }, () => ["failed", MCP_ERROR_CODES.providerUnavailable]),
    );
  });

  it("M4 a DELETE answered 404 confirms the remote session's termination", async () => {
    const { service, bridge, session } = await open();
    await session.discover(["web"]);
    service.forget(); // nothing told the bridge: closing sends its DELETE and gets 404
    await session.close();
    await expect(session.joinCleanup()).resolves.toBeUndefined();
    await expect(bridge.joinCleanup()).resolves.toBeUndefined();
    expect(service.seen.filter((entry) => entry.http === "DELETE").map((entry) => entry.status)).toEqual([404]);
  });
});

describe("streamable HTTP: a call's event stream that ends without an answer", () => {
  it("E4 a stream that breaks off with no answer and no event id fails the call at once as MCP_PROVIDER_UNREACHABLE", { timeout: 60_000 }, async () => {
    const { service, session } = await open();
    await session.discover(["web"]);
    const result = await session.callTool("web", "breaks", {}, { timeoutMs: 40_000 });
    expect(result.outcome).toBe("crashed"); // not timed_out: the bridge knows no answer can come
    expect(result.error?.code).toBe(MCP_ERROR_CODES.providerUnreachable);
    expect(result.error?.message).toContain('MCP tool "breaks" of provider "web"');
    expect(result.error?.message).toContain("may have had effects");
    expect(service.count("POST", "tools/call", "breaks")).toBe(1); // never replayed
    // One response's stream says nothing of the session: the connection goes on.
    expect(session.connected("web")).toBe(true);
    expect((await session.callTool("web", "echo", { text: "back" }, {})).output?.text).toBe("back");
  });

  it("E4 a stream that ends with no answer and no event id fails the call at once as MCP_PROVIDER_UNREACHABLE", { timeout: 60_000 }, async () => {
    const { session } = await open();
    await session.discover(["web"]);
    const result = await session.callTool("web", "ends", {}, { timeoutMs: 40_000 });
    expect(result.outcome).toBe("crashed");
    expect(result.error?.code).toBe(MCP_ERROR_CODES.providerUnreachable);
    expect(result.error?.message).toContain("ended without an answer");
  });

  it(
    "E4 one call's stream ending (a proxy's idle timeout) loses only that call: the others in flight on the connection are answered",
    { timeout: 60_000 },
    async () => {
      const { session } = await open();
      await session.discover(["web"]);
      const [slow, ends] = await Promise.all([
        session.callTool("web", "slow", {}, { timeoutMs: 40_000 }),
        session.callTool("web", "ends", {}, { timeoutMs: 40_000 }),
      ]);
      expect(ends).toMatchObject({ outcome: "crashed", error: { code: MCP_ERROR_CODES.providerUnreachable } });
      expect(slow).toMatchObject({ outcome: "succeeded", output: { text: "slow answer" } });
      expect(session.connected("web")).toBe(true);
    },
  );

  it("E4 a stream closed after its priming event (polling) is resumed and answered", async () => {
    const { session } = await open({ resumable: true });
    await session.discover(["web"]);
    const result = await session.callTool("web", "poll", {}, { timeoutMs: 20_000 });
    expect(result.outcome).toBe("succeeded");
    expect(result.output?.text).toBe("polled");
    expect(session.connected("web")).toBe(true);
  });

  it(
    "E4 a resumable stream that breaks, whose resumption the server refuses (it forgot the session), fails its call at once",
    { timeout: 60_000 },
    async () => {
      const { service, session } = await open({ resumable: true });
      await session.discover(["web"]);
      const pending = session.callTool("web", "breaks", {}, { timeoutMs: 40_000 });
      // Once the call has reached the service (a fixed wait could end before it on a busy machine).
      await eventually(() => service.count("POST", "tools/call", "breaks") > 0 || undefined);
      service.forget(); // a restart: the stream breaks 200 ms after the call came, and its resumption gets 404
      const result = await pending;
      expect(result).toMatchObject({ outcome: "crashed", error: { code: MCP_ERROR_CODES.providerUnreachable } });
      expect(result.error?.message).toContain("no longer knows its MCP session");
      expect(service.seen.some((entry) => entry.http === "GET" && entry.status === 404)).toBe(true);
    },
  );

  it(
    "E4 a resumable stream that breaks while the service is down fails its call once the SDK stops retrying, not at its bound",
    { timeout: 60_000 },
    async () => {
      const { service, session } = await open({ resumable: true });
      await session.discover(["web"]);
      const pending = session.callTool("web", "breaks", {}, { timeoutMs: 40_000 });
      await eventually(() => service.count("POST", "tools/call", "breaks") > 0 || undefined);
      await service.stop(); // down: every resumption is refused
      const result = await pending;
      expect(result).toMatchObject({ outcome: "crashed", error: { code: MCP_ERROR_CODES.providerUnreachable } });
      expect(result.error?.message).toContain("could not be resumed");
      expect(session.connected("web")).toBe(false);
    },
  );

  it(
    "E4 a standalone event stream the service ends and will not reopen (409) fails no call: the calls' own streams are fine",
    { timeout: 30_000 },
    async () => {
      const { service, session } = await open();
      await session.discover(["web"]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const pending = session.callTool("web", "slower", {}, {});
      await new Promise((resolve) => setTimeout(resolve, 100));
      service.refuseGets = 409;
      service.endGetStreams(); // the SDK retries the GET twice, then gives up: no outage
      expect(await pending).toMatchObject({ outcome: "succeeded", output: { text: "slower answer" } });
      expect(service.seen.filter((entry) => entry.http === "GET" && entry.status === 409).length).toBeGreaterThan(0);
      expect(session.connected("web")).toBe(true);
    },
  );

  it("E4 streams that end after their answer are never failed by the end-of-stream check", async () => {
    const { session } = await open();
    await session.discover(["web"]);
    const results = await Promise.all(Array.from({ length: 200 }, (_, index) => session.callTool("web", "echo", { text: `n${index}` }, {})));
    expect(results.filter((result) => result.outcome !== "succeeded")).toEqual([]);
    expect(results.map((result) => result.output?.text)).toEqual(Array.from({ length: 200 }, (_, index) => `n${index}`));
  });
});
