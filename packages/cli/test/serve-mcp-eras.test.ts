import { writeFileSync } from "node:fs";
import path from "node:path";
// The MCP SDK's own clients, as MCP clients of each protocol generation use them: v2
// (2026-07-28 and the 2025 revisions) and v1 1.32 (2025-11-25).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { FIXTURE_HOST, runEntry, sessionsOf, tempDir, withHttpServer, writeBundle } from "./helpers.js";

const temp = tempDir("mcp-eras");
afterAll(() => temp.cleanup());
const INFO = { name: "test-client", version: "1.0.0" };
const BUNDLE = () => writeBundle(path.join(temp.dir, "whoami"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, unknown> };

/** The v2 clients of each protocol generation, and what they must negotiate. */
const V2_CLIENTS = [
  {
    who: "a v2 Client pinned to 2026-07-28",
    era: "modern",
    version: "2026-07-28",
    client: () => new Client(INFO, { versionNegotiation: { mode: { pin: "2026-07-28" } } }),
  },
  { who: "a v2 Client in its default (legacy) mode", era: "legacy", version: "2025-11-25", client: () => new Client(INFO) },
  {
    who: "a v2 Client offering only 2025-06-18",
    era: "legacy",
    version: "2025-06-18",
    client: () => new Client(INFO, { supportedProtocolVersions: ["2025-06-18"] }),
  },
  {
    who: "a v2 Client offering only 2025-03-26",
    era: "legacy",
    version: "2025-03-26",
    client: () => new Client(INFO, { supportedProtocolVersions: ["2025-03-26"] }),
  },
] as const;

/** Lists and calls `fixture.whoami` through a connected client: it answers the id of the process that ran it. */
async function listAndCall(
  client: { listTools(): Promise<{ tools: { name: string }[] }>; callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown> },
  servingPid: number | null | undefined,
): Promise<void> {
  expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["fixture__whoami"]);
  const called = (await client.callTool({ name: "fixture__whoami", arguments: {} })) as ToolResult;
  expect(called.isError).toBe(false);
  expect(servingPid).toEqual(expect.any(Number));
  expect(called.structuredContent).toMatchObject({ pid: servingPid });
}

describe("serve --mcp on stdio answers clients of every protocol generation", () => {
  const args = (journal: string) => [FIXTURE_HOST, "serve", "--mcp", "--bundle", BUNDLE(), "--approve", "yes", "--journal", path.join(temp.dir, journal)];

  it.each(V2_CLIENTS.map((row) => [row.who, row.version, row] as const))(
    "M6 %s lists and calls a tool over stdio, on %s",
    async (_who, _version, { era, version, client: make }) => {
      const client = make();
      const transport = new StdioClientTransport({ command: process.execPath, args: args(`stdio-${version}.db`), stderr: "ignore" });
      await client.connect(transport);
      try {
        expect(client.getProtocolEra()).toBe(era);
        expect(client.getNegotiatedProtocolVersion()).toBe(version);
        expect(client.getServerVersion()?.name).toBe("openworker");
        await listAndCall(client, transport.pid);
      } finally {
        await client.close();
      }
    },
    30_000,
  );

  it("M6 the v1 SDK's Client (1.32.2) lists and calls a tool over stdio", async () => {
    const client = new V1Client(INFO);
    const transport = new V1StdioClientTransport({ command: process.execPath, args: args("stdio-v1.db"), stderr: "ignore" });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe("openworker");
      await listAndCall(client, transport.pid);
    } finally {
      await client.close();
    }
  });
});

describe("serve --mcp over HTTP answers clients of every protocol generation", () => {
  let server: { port: number; pid: number | undefined } | undefined;
  let stop: () => void = () => undefined;
  let stopped: Promise<unknown> = Promise.resolve();
  const url = () => new URL(`http://127.0.0.1:${server!.port}/mcp`);

  beforeAll(async () => {
    let release = () => undefined as void;
    const released = new Promise<void>((resolve) => (release = resolve));
    stop = release;
    // Serves until `stop()`: the server runs for every test of this block.
    await new Promise<void>((listening, failed) => {
      stopped = withHttpServer(
        FIXTURE_HOST,
        ["--bundle", BUNDLE(), "--approve", "yes", "--journal", path.join(temp.dir, "http.db")],
        async ({ port, child }) => {
          server = { port, pid: child.pid };
          listening();
          await released;
        },
      );
      stopped.catch(failed);
    });
  });
  afterAll(async () => {
    stop();
    await stopped;
  });

  it.each(V2_CLIENTS.map((row) => [row.who, row.version, row] as const))(
    "M6 %s lists and calls a tool over streamable HTTP, on %s",
    async (_who, _version, { era, version, client: make }) => {
      const client = make();
      await client.connect(new StreamableHTTPClientTransport(url()));
      try {
        expect(client.getProtocolEra()).toBe(era);
        expect(client.getNegotiatedProtocolVersion()).toBe(version);
        expect(client.getServerVersion()?.name).toBe("openworker");
        await listAndCall(client, server!.pid);
      } finally {
        await client.close();
      }
    },
  );

  it("M6 the v1 SDK's Client (1.32.2) lists and calls a tool over streamable HTTP, on 2025-11-25", async () => {
    const client = new V1Client(INFO);
    const transport = new V1StreamableHTTPClientTransport(url());
    await client.connect(transport);
    try {
      expect(transport.protocolVersion).toBe("2025-11-25");
      await listAndCall(client, server!.pid);
    } finally {
      await client.close();
    }
  });
});

describe("serve --mcp over HTTP serves 2026-07-28 clients, which have no MCP sessions, from one OpenWorker session", () => {
  it("M6 M11 they share one session that holds no --max-sessions slot; it is closed once idle for --idle-timeout and a later call opens another", async () => {
    const journal = path.join(temp.dir, "modern-shared.db");
    const result = await withHttpServer(
      FIXTURE_HOST,
      ["--max-sessions", "1", "--idle-timeout", "1", "--bundle", BUNDLE(), "--approve", "yes", "--journal", journal],
      async ({ port, stderr }) => {
        const url = new URL(`http://127.0.0.1:${port}/mcp`);
        const modern = () => new Client(INFO, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
        // A 2025 client holds the one slot: its event stream stays open, so it never expires.
        const legacy = new V1Client(INFO);
        await legacy.connect(new V1StreamableHTTPClientTransport(url));
        const refused = new Client(INFO);
        await expect(refused.connect(new StreamableHTTPClientTransport(url))).rejects.toThrow(/too many MCP sessions \(1/);
        for (const client of [modern(), modern()]) {
          await client.connect(new StreamableHTTPClientTransport(url));
          expect(((await client.callTool({ name: "fixture__whoami", arguments: {} })) as ToolResult).isError).toBe(false);
          await client.close();
        }
        await vi.waitFor(() => expect(stderr()).toContain("closing the OpenWorker session of 2026-07-28 clients: idle for 1 s"), {
          timeout: 20_000,
          interval: 50,
        });
        const [legacySession, shared] = await sessionsOf(journal);
        expect(legacySession).toMatchObject({ calls: 0 });
        expect(legacySession).not.toHaveProperty("closedAt");
        expect(shared).toMatchObject({ calls: 2, openCalls: 0, closedAt: expect.any(String) });
        const later = modern();
        await later.connect(new StreamableHTTPClientTransport(url));
        expect(((await later.callTool({ name: "fixture__whoami", arguments: {} })) as ToolResult).isError).toBe(false);
        await later.close();
        expect((await sessionsOf(journal)).map((session) => session.calls)).toEqual([0, 2, 1]);
        await legacy.close();
      },
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});

describe("serve --mcp over HTTP cancels the calls 2026-07-28 clients abandon", () => {
  it("M6 a call whose request the client abandons (it closes the response stream) is cancelled and journaled so, and the shared session then expires", async () => {
    const bundle = writeBundle(path.join(temp.dir, "wait"), JSON.stringify({ version: 3, tools: ["fixture.wait"] }));
    const journal = path.join(temp.dir, "modern-cancel.db");
    await withHttpServer(FIXTURE_HOST, ["--idle-timeout", "1", "--bundle", bundle, "--approve", "yes", "--journal", journal], async ({ port, stderr }) => {
      const client = new Client(INFO, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      // fixture.wait runs until cancelled.
      const abandon = new AbortController();
      const call = client.callTool({ name: "fixture__wait", arguments: {} }, { signal: abandon.signal });
      await vi.waitFor(async () => expect((await sessionsOf(journal))[0]?.openCalls).toBe(1), { timeout: 20_000, interval: 100 });
      abandon.abort();
      await expect(call).rejects.toThrow(/abort/i);
      await vi.waitFor(() => expect(stderr()).toContain("closing the OpenWorker session of 2026-07-28 clients: idle"), { timeout: 20_000, interval: 50 });
      await client.close();
      const [session] = await sessionsOf(journal);
      expect(session).toMatchObject({ calls: 1, openCalls: 0, closedAt: expect.any(String) });
      expect((await runEntry(FIXTURE_HOST, ["journal", "show", session!.sessionId, "--journal", journal])).stdout).toMatch(
        /fixture\.wait .* cancelled TOOL_CANCELLED/,
      );
    });
  }, 60_000);
});

describe("serve --mcp over HTTP when the OpenWorker session of 2026-07-28 clients cannot open", () => {
  it("M6 their tool call gets the session's error with its code (error.data.code), as a 2025 client's initialize does, and the server keeps serving", async () => {
    // The host classifies fixture.echo "read_only"; this policy has no rule for that class, which only openSession checks.
    const classifiedHost = path.join(path.dirname(FIXTURE_HOST), "classified-host.mjs");
    const bundle = writeBundle(path.join(temp.dir, "classified"), JSON.stringify({ version: 3, tools: ["fixture.echo"] }));
    const policy = path.join(temp.dir, "no-read-only-rule.json");
    writeFileSync(policy, JSON.stringify({ name: "ops", rules: { external: "ask" } }));
    await withHttpServer(
      classifiedHost,
      ["--bundle", bundle, "--policy", policy, "--journal", path.join(temp.dir, "modern-refused.db")],
      async ({ port, stderr, child }) => {
        const client = new Client(INFO, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
        await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
        // Listing needs no session; each call tries to open it again.
        for (let attempt = 0; attempt < 2; attempt += 1) {
          expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["fixture__echo"]);
          const call = client.callTool({ name: "fixture__echo", arguments: { text: "x" } });
          await expect(call).rejects.toMatchObject({ code: -32603, data: { code: "OPTIONS_INVALID" } });
          await expect(call).rejects.toThrow(/^OPTIONS_INVALID: .*classifications\["fixture\.echo"\] is "read_only"/);
        }
        await client.close();
        expect(child.exitCode).toBe(null);
        expect(stderr()).toContain("refused a 2026-07-28 client's tool call: the OpenWorker session could not open (OPTIONS_INVALID");
      },
    );
  });
});
