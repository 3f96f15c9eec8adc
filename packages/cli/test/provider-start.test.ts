import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURE_HOST, REPO, runEntry, tempDir, writeBundle } from "./helpers.js";

const temp = tempDir("provider-start");
afterAll(() => temp.cleanup());

/** The bridge's slow-start fixture: it reads stdin only after START_DELAY_MS. */
const SLOW_SERVER = path.join(REPO, "packages/mcp-bridge/test/fixtures/slow-start.mjs");
const PROGRESS = /starting MCP provider "big" \(node\S* \S*slow-start\.mjs\)…/g;

function serversFile(name: string, entry: Record<string, unknown>): string {
  const file = path.join(temp.dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ servers: { big: entry } }));
  return file;
}

const slow = (delayMs: number, bounds: Record<string, number> = {}) => ({
  transport: "stdio",
  command: process.execPath,
  args: [SLOW_SERVER],
  env: { START_DELAY_MS: String(delayMs) },
  ...bounds,
});

function check(name: string, servers: string, tools: readonly string[] = ["big.ping"]) {
  const bundle = writeBundle(path.join(temp.dir, name), JSON.stringify({ version: 3, tools }));
  return runEntry(FIXTURE_HOST, ["tools", "check", "--bundle", bundle, "--servers", servers, "--json"]);
}

describe("MCP provider start-up through the stock CLI (M1, M10)", () => {
  it("M1 M10 tools check names a provider still starting after a second, once, and servers.json's connectTimeoutMs lets it finish", async () => {
    const result = await check("slow", serversFile("slow", slow(2_000, { connectTimeoutMs: 5_000 })));
    expect(result.stderr.match(PROGRESS)).toHaveLength(1);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true });
  });

  it("M1 a provider that starts quickly prints no progress line", async () => {
    const result = await check("quick", serversFile("quick", slow(0)));
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("starting MCP provider");
  });

  it("M10 servers.json's connectTimeoutMs bounds the start, and the problem names the bound", async () => {
    const result = await check("short", serversFile("short", slow(1_000, { connectTimeoutMs: 300 })));
    expect(result.code).toBe(1);
    const { problems } = JSON.parse(result.stdout) as { problems: { code: string; message: string }[] };
    expect(problems).toEqual([
      expect.objectContaining({
        code: "MCP_CONNECT_TIMEOUT",
        message: expect.stringContaining(
          "did not finish initialize within 300 ms (its connect bound: for a provider that starts slowly, raise connectTimeoutMs",
        ),
      }),
    ]);
  });

  it("M10 a servers.json connectTimeoutMs over one hour is refused, naming the file, the server and the field", async () => {
    const servers = serversFile("too-long", slow(0, { connectTimeoutMs: 3_600_001 }));
    const result = await runEntry(FIXTURE_HOST, ["tools", "list", "--servers", servers]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      `${servers}: server "big": field "connectTimeoutMs" must be a whole number of milliseconds from 1 to 3600000 (one hour), got 3600001`,
    );
  });

  it("M1 call shows the progress line while the runtime starts a slow provider", async () => {
    const servers = serversFile("call", slow(2_000, { connectTimeoutMs: 5_000 }));
    const result = await runEntry(FIXTURE_HOST, [
      "call",
      "big.ping",
      "--args",
      "{}",
      "--approve",
      "yes",
      "--servers",
      servers,
      "--journal",
      path.join(temp.dir, "call.sqlite"),
    ]);
    expect(result.stderr.match(PROGRESS)).toHaveLength(1);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("pong");
  });
});

describe("an unreachable streamable-HTTP provider (E6)", () => {
  it('E6 tools check names the redacted URL and the refused connection, not "fetch failed"', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const secret = "cli-wiki-secret-0815";
    const servers = path.join(temp.dir, "down.json");
    writeFileSync(servers, JSON.stringify({ servers: { wiki: { transport: "streamable_http", url: `http://127.0.0.1:${port}/mcp?key=${secret}` } } }));
    const result = await check("down", servers, ["wiki.search"]);
    expect(result.code).toBe(1);
    const { problems } = JSON.parse(result.stdout) as { problems: { code: string; message: string }[] };
    expect(problems[0]).toMatchObject({
      code: "MCP_PROVIDER_UNREACHABLE",
      message: expect.stringContaining(`MCP provider "wiki" at http://127.0.0.1:${port}/mcp?key=[redacted] is unreachable: connection refused (ECONNREFUSED)`),
    });
    expect(result.stdout + result.stderr).not.toContain(secret);
  });
});
