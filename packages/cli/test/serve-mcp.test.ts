import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
// The MCP SDK's own client, as any MCP client would use it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it, vi } from "vitest";
import { alive, COWORKER, DEMO_POLICY, FIXTURE_HOST, HOST, REPO, runEntry, sessionsOf, tempDir, withHttpServer, writeBundle } from "./helpers.js";

const temp = tempDir("mcp");
/** A host that registers fixture.echo with the classification "read_only". */
const CLASSIFIED_HOST = path.join(path.dirname(FIXTURE_HOST), "classified-host.mjs");
const SLOW_OPEN_HOST = path.join(path.dirname(FIXTURE_HOST), "slow-open-host.mjs");
/** An MCP provider whose one tool, `pid`, answers its own process id. */
const PID_SERVER = path.join(path.dirname(FIXTURE_HOST), "pid-server.mjs");
afterAll(() => temp.cleanup());

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, unknown> };

describe("serve --mcp", () => {
  it("answers initialize with the CLI package's own version (inlined at build time, so a bundled host reports it too)", async () => {
    const { version } = JSON.parse(readFileSync(path.join(REPO, "packages/cli/package.json"), "utf8")) as { version: string };
    const client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [HOST, "serve", "--mcp", "--bundle", COWORKER, "--journal", path.join(temp.dir, "version.db")],
        stderr: "ignore",
      }),
    );
    try {
      expect(client.getServerVersion()).toEqual({ name: "openworker", version });
    } finally {
      await client.close();
    }
  });

  it("B2 E5 A1 A3 over stdio: lists exactly the selection and governs every call (validation, policy, journal)", async () => {
    const journal = path.join(temp.dir, "stdio.db");
    const client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [HOST, "serve", "--mcp", "--bundle", COWORKER, "--policy", DEMO_POLICY, "--journal", journal],
        stderr: "ignore",
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => [tool.name, tool._meta?.["openworker/qualifiedName"]])).toEqual([
        ["example__web_search", "example.web_search"],
        ["notification__notify", "notification.notify"],
        ["acer__acer_care_center_batterystatus_get", "acer.acer_care_center_batterystatus_get"],
      ]);
      const search = (await client.callTool({ name: "example__web_search", arguments: { query: "model context protocol" } })) as ToolResult;
      expect(search.isError).toBe(false);
      expect(search.structuredContent).toMatchObject({ source: "offline-index" });
      const invalid = (await client.callTool({ name: "example__web_search", arguments: { nope: true } })) as ToolResult;
      expect(invalid.isError).toBe(true);
      expect(invalid.content[0]?.text).toMatch(/^Error ARGUMENTS_INVALID/);
      // The demo policy asks a person for external tools; serve --mcp answers --approve no by default.
      const notify = (await client.callTool({ name: "notification__notify", arguments: { title: "t", body: "b" } })) as ToolResult;
      expect(notify.isError).toBe(true);
      expect(notify.content[0]?.text).toMatch(/^Error APPROVAL_DENIED/);
      const battery = (await client.callTool({ name: "acer__acer_care_center_batterystatus_get", arguments: {} })) as ToolResult;
      expect(battery.isError).toBe(false);
    } finally {
      await client.close();
    }
    const { runHost } = await import("./helpers.js");
    const sessions = JSON.parse((await runHost(["journal", "sessions", "--json", "--journal", journal])).stdout);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ calls: 4, openCalls: 0 });
  });

  it("over HTTP on 127.0.0.1: serves an SDK client, and refuses a foreign Host or Origin (DNS rebinding)", async () => {
    await withHttpServer(HOST, ["--bundle", COWORKER, "--approve", "yes", "--journal", path.join(temp.dir, "http.db")], async ({ port }) => {
      const client = new Client({ name: "test-client", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      expect((await client.listTools()).tools).toHaveLength(3);
      const search = (await client.callTool({ name: "example__web_search", arguments: { query: "mcp" } })) as ToolResult;
      expect(search.isError).toBe(false);
      await client.close();

      const foreignHost = await post(port, { host: `attacker.example:${port}` });
      expect(foreignHost.status).toBe(403);
      expect(foreignHost.body).toContain("is not this machine's loopback address");
      const foreignOrigin = await post(port, { host: `127.0.0.1:${port}`, origin: "http://attacker.example" });
      expect(foreignOrigin.status).toBe(403);
      const wrongPort = await post(port, { host: `localhost:${port + 1}` });
      expect(wrongPort.status).toBe(403);
    });
  });
});

describe("serve --mcp over HTTP bounds what clients can open", () => {
  it("M4 M11 a refused initialize opens no session, and at --max-sessions the least recently used idle session makes room; the journal holds only the accepted ones", async () => {
    const bundle = writeBundle(path.join(temp.dir, "whoami"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const journal = path.join(temp.dir, "bounded.db");
    await withHttpServer(FIXTURE_HOST, ["--max-sessions", "2", "--bundle", bundle, "--approve", "yes", "--journal", journal], async ({ port, stderr }) => {
      const host = `127.0.0.1:${port}`;
      // Refused by the transport (it must accept event streams): no session id comes back, so none may be opened.
      for (let index = 0; index < 5; index += 1) expect((await post(port, { host, accept: "application/json" })).status).toBe(406);
      for (let index = 0; index < 3; index += 1) expect((await post(port, { host })).status).toBe(200);
      expect(stderr()).toContain("the least recently used idle one");
      await vi.waitFor(
        async () => {
          const listed = JSON.parse((await runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal])).stdout) as { closedAt?: string }[];
          expect(listed).toHaveLength(3);
          expect(listed.filter((session) => session.closedAt !== undefined)).toHaveLength(1);
        },
        { timeout: 10_000, interval: 100 },
      );
    });
  });
});

describe("serve --mcp over HTTP answers a malformed request target", () => {
  it("a request target that is not a URL (//, http://[::1/mcp) is answered 400 with a message, not a 500", async () => {
    const bundle = writeBundle(path.join(temp.dir, "whoami-target"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    await withHttpServer(FIXTURE_HOST, ["--bundle", bundle, "--approve", "yes", "--journal", path.join(temp.dir, "target.db")], async ({ port }) => {
      for (const target of ["//", "http://[::1/mcp"]) {
        const answer = await post(port, { host: `127.0.0.1:${port}` }, target);
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body)).toMatchObject({
          error: { message: "bad request: the request target is not a valid URL path; the MCP endpoint is /mcp" },
        });
      }
      expect((await post(port, { host: `127.0.0.1:${port}` }, "/other")).status).toBe(404);
      expect((await post(port, { host: `127.0.0.1:${port}` })).status).toBe(200);
    });
  });
});

describe("serve --mcp over HTTP when a client's OpenWorker session cannot open", () => {
  it("M4 a session the runtime refuses at open answers that client's initialize with its code, frees its slot, and the server stays up", async () => {
    const bundle = writeBundle(path.join(temp.dir, "classified"), JSON.stringify({ version: 3, tools: ["fixture.echo"] }));
    // The host classifies fixture.echo "read_only"; this policy has no rule for that class, which only openSession checks.
    const policy = path.join(temp.dir, "no-read-only-rule.json");
    writeFileSync(policy, JSON.stringify({ name: "ops", rules: { external: "ask" } }));
    const result = await withHttpServer(
      CLASSIFIED_HOST,
      ["--max-sessions", "1", "--bundle", bundle, "--policy", policy, "--journal", path.join(temp.dir, "refused.db")],
      async ({ port, stderr, child }) => {
        // Twice with --max-sessions 1: the failed session must not keep its slot (no 503).
        for (let attempt = 0; attempt < 2; attempt += 1) {
          const client = new Client({ name: "test-client", version: "1.0.0" });
          const refused = client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
          await expect(refused).rejects.toMatchObject({ data: { code: "OPTIONS_INVALID" } });
          await expect(refused).rejects.toThrow(/classifications\["fixture\.echo"\] is "read_only"/);
          await client.close();
        }
        expect(child.exitCode).toBe(null);
        await vi.waitFor(() => expect(stderr()).toContain("refused an MCP client's initialize: its OpenWorker session could not open (OPTIONS_INVALID"));
      },
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("serve --mcp over HTTP when a client goes away while its session opens", () => {
  it("M4 the session opened for a client that never got its id is closed and its slot freed: the next client gets a session, not 503", async () => {
    const bundle = writeBundle(path.join(temp.dir, "slow"), JSON.stringify({ version: 3, tools: ["fixture.echo"] }));
    await withHttpServer(
      SLOW_OPEN_HOST,
      ["--max-sessions", "1", "--bundle", bundle, "--approve", "yes", "--journal", path.join(temp.dir, "slow.db")],
      async ({ port, stderr }) => {
        // The first client gives up while its session takes 1.5 s to open.
        await new Promise<void>((resolve) => {
          const request = http.request({
            host: "127.0.0.1",
            port,
            path: "/mcp",
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          });
          request.once("error", () => resolve());
          request.end(
            JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "initialize",
              params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
            }),
          );
          setTimeout(() => {
            request.destroy();
            resolve();
          }, 300);
        });
        // Its session opens, then closes at once: nobody can use or end it.
        await vi.waitFor(() => expect(stderr().match(/\[host\] session \S+ closed/g)).toHaveLength(1), { timeout: 10_000 });
        const client = new Client({ name: "test-client", version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["fixture__echo"]);
        await client.close();
      },
    );
  }, 30_000);
});

describe("serve --mcp over HTTP closes the sessions of clients that went away without DELETE (--idle-timeout)", () => {
  it("M4 a client that calls a tool and goes away without DELETE has its session closed once idle: its MCP process ended, the close journaled, its session id then 404", async () => {
    const servers = path.join(temp.dir, "pid-servers.json");
    writeFileSync(servers, JSON.stringify({ servers: { pids: { transport: "stdio", command: process.execPath, args: [PID_SERVER] } } }));
    const bundle = writeBundle(path.join(temp.dir, "pids"), JSON.stringify({ version: 3, tools: ["pids.pid"] }));
    const journal = path.join(temp.dir, "idle.db");
    const result = await withHttpServer(
      FIXTURE_HOST,
      ["--idle-timeout", "1", "--servers", servers, "--bundle", bundle, "--approve", "yes", "--journal", journal],
      async ({ port }) => {
        const client = new Client({ name: "test-client", version: "1.0.0" });
        const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
        await client.connect(transport);
        const sessionId = transport.sessionId!;
        const called = (await client.callTool({ name: "pids__pid", arguments: {} })) as ToolResult;
        const pid = called.structuredContent!.pid as number;
        expect(alive(pid)).toBe(true);
        // The SDK client's close() drops its streams and sends no DELETE (terminateSession() would).
        await client.close();
        await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 20_000, interval: 50 });
        await vi.waitFor(async () => expect((await sessionsOf(journal))[0]?.closedAt).toEqual(expect.any(String)), { timeout: 20_000, interval: 200 });
        const later = await send(port, { jsonrpc: "2.0", id: 9, method: "tools/list" }, sessionId);
        expect(later.status).toBe(404);
        expect(JSON.parse(later.body)).toMatchObject({ error: { code: -32001 } });
      },
    );
    expect(result.stderr).toMatch(/closing MCP session \S+: idle for 1 s/);
  }, 60_000);

  it("with --max-sessions 1, the slot of an expired session is free: the next client is served, not 503", async () => {
    const bundle = writeBundle(path.join(temp.dir, "whoami-idle"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const journal = path.join(temp.dir, "idle-slot.db");
    await withHttpServer(
      FIXTURE_HOST,
      ["--max-sessions", "1", "--idle-timeout", "1", "--bundle", bundle, "--approve", "yes", "--journal", journal],
      async ({ port }) => {
        const first = await initialize(port);
        expect((await send(port, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "fixture__whoami", arguments: {} } }, first)).status).toBe(200);
        // The first client is gone (no DELETE): a new one waits for its slot, and then gets it.
        const second = await vi.waitFor(
          async () => {
            const answer = await post(port, { host: `127.0.0.1:${port}` });
            expect(answer.status).toBe(200);
            return answer;
          },
          { timeout: 20_000, interval: 200 },
        );
        expect(second.body).toContain('"serverInfo"');
        expect((await send(port, { jsonrpc: "2.0", id: 3, method: "tools/list" }, first)).status).toBe(404);
        const sessions = await sessionsOf(journal);
        expect(sessions).toHaveLength(2);
        expect(sessions[0]!.closedAt).toEqual(expect.any(String));
      },
    );
  }, 60_000);

  it("a session whose tool call is still running is not expired, though its client stopped listening; once the call ends it is", async () => {
    const bundle = writeBundle(path.join(temp.dir, "wait-idle"), JSON.stringify({ version: 3, tools: ["fixture.wait"] }));
    const journal = path.join(temp.dir, "idle-call.db");
    await withHttpServer(FIXTURE_HOST, ["--idle-timeout", "1", "--bundle", bundle, "--approve", "yes", "--journal", journal], async ({ port, stderr }) => {
      const busy = await initialize(port);
      // fixture.wait runs until cancelled; the client drops the request's event stream once the call is journaled as open.
      const call = http.request({
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": busy },
      });
      call.once("error", () => undefined);
      call.end(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "fixture__wait", arguments: {} } }));
      await vi.waitFor(async () => expect((await sessionsOf(journal))[0]?.openCalls).toBe(1), { timeout: 20_000, interval: 200 });
      call.destroy();
      // A session opened after that, and left idle, shows the idle timeout has passed for the busy one too.
      const control = await initialize(port);
      await vi.waitFor(() => expect(stderr()).toContain(`closing MCP session ${control}: idle`), { timeout: 20_000, interval: 50 });
      expect(stderr()).not.toContain(`closing MCP session ${busy}`);
      // Still known (202, not 404): the client cancels its call, which ends it.
      const cancelled = await send(port, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "the client gave up" } }, busy);
      expect(cancelled.status).toBe(202);
      await vi.waitFor(() => expect(stderr()).toContain(`closing MCP session ${busy}: idle`), { timeout: 20_000, interval: 50 });
      expect((await send(port, { jsonrpc: "2.0", id: 3, method: "tools/list" }, busy)).status).toBe(404);
      await vi.waitFor(
        async () =>
          expect((await sessionsOf(journal)).map(({ openCalls, closedAt }) => ({ openCalls, closed: closedAt !== null }))).toEqual([
            { openCalls: 0, closed: true },
            { openCalls: 0, closed: true },
          ]),
        { timeout: 20_000, interval: 200 },
      );
    });
  }, 60_000);

  it("a connected client, its event stream open, is not expired between its calls", async () => {
    const bundle = writeBundle(path.join(temp.dir, "whoami-stream"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    await withHttpServer(
      FIXTURE_HOST,
      ["--idle-timeout", "1", "--bundle", bundle, "--approve", "yes", "--journal", path.join(temp.dir, "idle-stream.db")],
      async ({ port, stderr }) => {
        const client = new Client({ name: "test-client", version: "1.0.0" });
        const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
        await client.connect(transport);
        const control = await initialize(port);
        await vi.waitFor(() => expect(stderr()).toContain(`closing MCP session ${control}: idle`), { timeout: 20_000, interval: 50 });
        expect(stderr()).not.toContain(`closing MCP session ${transport.sessionId}`);
        expect(((await client.callTool({ name: "fixture__whoami", arguments: {} })) as ToolResult).isError).toBe(false);
        await client.close();
        await vi.waitFor(() => expect(stderr()).toContain(`closing MCP session ${transport.sessionId}: idle`), { timeout: 20_000, interval: 50 });
      },
    );
  }, 60_000);

  it("a bad --idle-timeout is CLI_USAGE naming the option and the value, as is --idle-timeout without --http", async () => {
    const bundle = writeBundle(path.join(temp.dir, "whoami-usage"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    for (const value of ["0", "-1", "1.5", "30m", "1000000"]) {
      const ran = await runEntry(FIXTURE_HOST, ["serve", "--mcp", "--bundle", bundle, "--http", "0", `--idle-timeout=${value}`]);
      expect(ran.code, value).toBe(2);
      expect(ran.stderr, value).toContain(`error CLI_USAGE: --idle-timeout must be a whole number of seconds from 1 to 999999, got ${JSON.stringify(value)}`);
    }
    const stdio = await runEntry(FIXTURE_HOST, ["serve", "--mcp", "--bundle", bundle, "--idle-timeout", "60"]);
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toContain("error CLI_USAGE: serve --mcp: --idle-timeout applies to --http");
  });
});

function post(port: number, headers: Record<string, string>, target = "/mcp"): Promise<{ status: number | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        path: target,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode, body }));
      },
    );
    request.once("error", reject);
    request.end(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      }),
    );
  });
}

/** One JSON-RPC message POSTed as a bare client would (fetch), with the answer read whole. */
async function send(port: number, message: object, sessionId?: string): Promise<{ status: number; body: string; sessionId: string | undefined }> {
  const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }),
    },
    body: JSON.stringify(message),
  });
  return { status: response.status, body: await response.text(), sessionId: response.headers.get("mcp-session-id") ?? undefined };
}

/** Opens an MCP session as a bare client that holds no event stream (initialize, then initialized): its id. */
async function initialize(port: number): Promise<string> {
  const opened = await send(port, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bare", version: "1" } },
  });
  expect(opened.status).toBe(200);
  expect((await send(port, { jsonrpc: "2.0", method: "notifications/initialized" }, opened.sessionId)).status).toBe(202);
  return opened.sessionId!;
}
