import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
// The MCP SDK's own client, as any MCP client would use it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it, vi } from "vitest";
import { collect, COWORKER, DEMO_POLICY, FIXTURE_HOST, HOST, REPO, runEntry, tempDir, waitForOutput, writeBundle } from "./helpers.js";

const temp = tempDir("mcp");
/** A host that registers fixture.echo with the classification "read_only". */
const CLASSIFIED_HOST = path.join(path.dirname(FIXTURE_HOST), "classified-host.mjs");
const SLOW_OPEN_HOST = path.join(path.dirname(FIXTURE_HOST), "slow-open-host.mjs");
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
      expect(tools.map((tool) => [tool.name, tool.title])).toEqual([
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
    const { child, done, port } = await serveHttp(HOST, ["--bundle", COWORKER, "--approve", "yes", "--journal", path.join(temp.dir, "http.db")]);
    try {
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
    } finally {
      child.kill("SIGTERM");
    }
    expect((await done).code).toBe(0);
  });
});

describe("serve --mcp over HTTP bounds what clients can open", () => {
  it("M4 a refused initialize opens no session, and past --max-sessions new clients get 503; the journal holds only the accepted ones", async () => {
    const bundle = writeBundle(path.join(temp.dir, "whoami"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const journal = path.join(temp.dir, "bounded.db");
    const { child, done, port } = await serveHttp(FIXTURE_HOST, ["--max-sessions", "2", "--bundle", bundle, "--approve", "yes", "--journal", journal]);
    try {
      const host = `127.0.0.1:${port}`;
      // Refused by the transport (it must accept event streams): no session id comes back, so none may be opened.
      for (let index = 0; index < 5; index += 1) expect((await post(port, { host, accept: "application/json" })).status).toBe(406);
      expect((await post(port, { host })).status).toBe(200);
      expect((await post(port, { host })).status).toBe(200);
      const third = await post(port, { host });
      expect(third.status).toBe(503);
      expect(third.body).toContain("too many MCP sessions (2");
      const listed = await runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal]);
      expect(JSON.parse(listed.stdout)).toHaveLength(2);
    } finally {
      child.kill("SIGTERM");
    }
    expect((await done).code).toBe(0);
  });
});

describe("serve --mcp over HTTP answers a malformed request target", () => {
  it("a request target that is not a URL (//, http://[::1/mcp) is answered 400 with a message, not a 500", async () => {
    const bundle = writeBundle(path.join(temp.dir, "whoami-target"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const { child, done, port } = await serveHttp(FIXTURE_HOST, ["--bundle", bundle, "--approve", "yes", "--journal", path.join(temp.dir, "target.db")]);
    try {
      for (const target of ["//", "http://[::1/mcp"]) {
        const answer = await post(port, { host: `127.0.0.1:${port}` }, target);
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body)).toMatchObject({ error: { message: "bad request: the request target is not a valid URL path; the MCP endpoint is /mcp" } });
      }
      expect((await post(port, { host: `127.0.0.1:${port}` }, "/other")).status).toBe(404);
      expect((await post(port, { host: `127.0.0.1:${port}` })).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
    expect((await done).code).toBe(0);
  });
});

describe("serve --mcp over HTTP when a client's OpenWorker session cannot open", () => {
  it("M4 a session the runtime refuses at open answers that client's initialize with its code, frees its slot, and the server stays up", async () => {
    const bundle = writeBundle(path.join(temp.dir, "classified"), JSON.stringify({ version: 3, tools: ["fixture.echo"] }));
    // The host classifies fixture.echo "read_only"; this policy has no rule for that class, which only openSession checks.
    const policy = path.join(temp.dir, "no-read-only-rule.json");
    writeFileSync(policy, JSON.stringify({ name: "ops", rules: { external: "ask" } }));
    const { child, done, port } = await serveHttp(CLASSIFIED_HOST, ["--max-sessions", "1", "--bundle", bundle, "--policy", policy, "--journal", path.join(temp.dir, "refused.db")]);
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      // Twice with --max-sessions 1: the failed session must not keep its slot (no 503).
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const client = new Client({ name: "test-client", version: "1.0.0" });
        const refused = client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
        await expect(refused).rejects.toMatchObject({ data: { code: "OPTIONS_INVALID" } });
        await expect(refused).rejects.toThrow(/classifications\["fixture\.echo"\] is "read_only"/);
        await client.close();
      }
      expect(child.exitCode).toBe(null);
      await vi.waitFor(() => expect(stderr).toContain("refused an MCP client's initialize: its OpenWorker session could not open (OPTIONS_INVALID"));
    } finally {
      child.kill("SIGTERM");
    }
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("serve --mcp over HTTP when a client goes away while its session opens", () => {
  it("M4 the session opened for a client that never got its id is closed and its slot freed: the next client gets a session, not 503", async () => {
    const bundle = writeBundle(path.join(temp.dir, "slow"), JSON.stringify({ version: 3, tools: ["fixture.echo"] }));
    const { child, done, port } = await serveHttp(SLOW_OPEN_HOST, ["--max-sessions", "1", "--bundle", bundle, "--approve", "yes", "--journal", path.join(temp.dir, "slow.db")]);
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      // The first client gives up while its session takes 1.5 s to open.
      await new Promise<void>((resolve) => {
        const request = http.request({ host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" } });
        request.once("error", () => resolve());
        request.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }));
        setTimeout(() => {
          request.destroy();
          resolve();
        }, 300);
      });
      // Its session opens, then closes at once: nobody can use or end it.
      await vi.waitFor(() => expect(stderr.match(/\[host\] session \S+ closed/g)).toHaveLength(1), { timeout: 10_000 });
      const client = new Client({ name: "test-client", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["fixture__echo"]);
      await client.close();
    } finally {
      child.kill("SIGTERM");
    }
    expect((await done).code).toBe(0);
  }, 30_000);
});

/** Starts `serve --mcp --http 0` of a host entry and waits for the port it printed. */
async function serveHttp(entry: string, args: readonly string[]) {
  const child = spawn(process.execPath, [entry, "serve", "--mcp", "--http", "0", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  const done = collect(child);
  const banner = await waitForOutput(child.stderr!, (text) => /127\.0\.0\.1:\d+\/mcp/.test(text));
  return { child, done, port: Number(/127\.0\.0\.1:(\d+)\/mcp/.exec(banner)![1]) };
}

function post(port: number, headers: Record<string, string>, target = "/mcp"): Promise<{ status: number | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: "127.0.0.1", port, path: target, method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } },
      (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode, body }));
      },
    );
    request.once("error", reject);
    request.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }));
  });
}
