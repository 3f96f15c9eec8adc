import path from "node:path";
// The MCP SDK's own client, as any MCP client would use it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURE_HOST, sessionsOf, tempDir, withHttpServer, writeBundle } from "./helpers.js";

const temp = tempDir("mcp-sessions");
afterAll(() => temp.cleanup());

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[] };
const INFO = { name: "sessions-client", version: "1.0.0" };
/** fixture.whoami answers at once; fixture.wait runs until it is cancelled. */
const bundle = () => writeBundle(path.join(temp.dir, "bundle"), JSON.stringify({ version: 3, tools: ["fixture.whoami", "fixture.wait"] }));

/** One JSON-RPC message POSTed as a bare client would, the answer read whole. */
async function send(port: number, body: string, sessionId?: string): Promise<{ status: number; body: string; sessionId: string | undefined }> {
  const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }),
    },
    body,
  });
  return { status: response.status, body: await response.text(), sessionId: response.headers.get("mcp-session-id") ?? undefined };
}

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bare", version: "1" } },
});

describe("serve --mcp --http never lets vanished clients lock others out", () => {
  it("M11 200 clients that never DELETE leave the server accepting new ones; a client with its event stream open keeps its session", async () => {
    const journal = path.join(temp.dir, "abandoned.db");
    await withHttpServer(FIXTURE_HOST, ["--max-sessions", "8", "--bundle", bundle(), "--approve", "yes", "--journal", journal], async ({ port, stderr }) => {
      const url = new URL(`http://127.0.0.1:${port}/mcp`);
      // Connected: its GET stream is open, so its session is never idle and never evicted.
      const kept = new Client(INFO);
      await kept.connect(new StreamableHTTPClientTransport(url));
      for (let index = 0; index < 200; index += 1) expect((await send(port, INITIALIZE)).status, `client ${index}`).toBe(200);
      expect(stderr()).toContain("to make room for a new client at --max-sessions 8");
      const late = new Client(INFO);
      await late.connect(new StreamableHTTPClientTransport(url));
      for (const client of [kept, late]) expect(((await client.callTool({ name: "fixture__whoami", arguments: {} })) as ToolResult).isError).toBe(false);
      await late.close();
      await kept.close();
    });
    const sessions = await sessionsOf(journal);
    expect(sessions).toHaveLength(202);
    expect(sessions.every((session) => session.closedAt !== null && session.closedAt !== undefined)).toBe(true);
  });

  it("M11 a body that is not JSON gets a JSON-RPC parse error (-32700)", async () => {
    await withHttpServer(FIXTURE_HOST, ["--bundle", bundle(), "--journal", path.join(temp.dir, "parse.db")], async ({ port }) => {
      const answer = await send(port, "{not json");
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    });
  });
});

describe("serve --mcp answers the calls in flight when it stops", () => {
  it("M11 A3 over HTTP: SIGTERM mid-call answers the call with an error at once, and the journal records it cancelled", async () => {
    const journal = path.join(temp.dir, "stop-http.db");
    await withHttpServer(FIXTURE_HOST, ["--bundle", bundle(), "--approve", "yes", "--journal", journal], async ({ port, child }) => {
      const client = new Client(INFO);
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      const call = client.callTool({ name: "fixture__wait", arguments: {} }, undefined, { onprogress: () => child.kill("SIGTERM") });
      const started = Date.now();
      const answer = (await call) as ToolResult;
      expect(answer.isError).toBe(true);
      expect(answer.content[0]?.text).toMatch(/^Error CLI_INTERRUPTED: the MCP server is stopping/);
      // Not the client's own timeout (60 s): the stop's answer.
      expect(Date.now() - started).toBeLessThan(10_000);
    });
    const [session] = await sessionsOf(journal);
    expect(session).toMatchObject({ calls: 1, openCalls: 0 });
  });

  it("M11 A3 over stdio: SIGTERM mid-call answers the call with an error before the transport closes", async () => {
    const journal = path.join(temp.dir, "stop-stdio.db");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [FIXTURE_HOST, "serve", "--mcp", "--bundle", bundle(), "--approve", "yes", "--journal", journal],
      stderr: "ignore",
    });
    const client = new Client(INFO);
    await client.connect(transport);
    const answer = (await client.callTool({ name: "fixture__wait", arguments: {} }, undefined, {
      onprogress: () => process.kill(transport.pid!, "SIGTERM"),
    })) as ToolResult;
    expect(answer.isError).toBe(true);
    expect(answer.content[0]?.text).toMatch(/^Error CLI_INTERRUPTED: the MCP server is stopping/);
    await client.close();
    const [session] = await sessionsOf(journal);
    expect(session).toMatchObject({ calls: 1, openCalls: 0 });
  });
});
