import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_HOST, REPO, runEntry, tempDir, waitForOutput, writeBundle } from "./helpers.js";

// Servers of every protocol generation, and published ones, through the CLI as a host
// developer drives it: `tools list --discover`, `call`, `run`, then `journal verify`.
const temp = tempDir("eras");
const bridgeFixtures = path.join(REPO, "packages/mcp-bridge/test/fixtures");
const published = createRequire(path.join(REPO, "packages/mcp-bridge/package.json"));
const entryOf = (name: string) => path.join(path.dirname(published.resolve(`${name}/package.json`)), "dist", "index.js");
const files = path.join(temp.dir, "files");
mkdirSync(files, { recursive: true });
writeFileSync(path.join(files, "note.txt"), "a note for the filesystem server\n");

const services: ChildProcess[] = [];
const urls: Record<string, string> = {};

/** A port the system just gave out and took back, for a server that cannot report the one it bound. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  const modern = spawn(process.execPath, [path.join(bridgeFixtures, "modern-http.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
  services.push(modern);
  urls.modern = await new Promise<string>((resolve) => createInterface({ input: modern.stdout! }).once("line", resolve));
  const port = await freePort();
  const everything = spawn(process.execPath, [entryOf("@modelcontextprotocol/server-everything"), "streamableHttp"], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, PORT: String(port) },
  });
  services.push(everything);
  await waitForOutput(everything.stderr!, (text) => text.includes("listening on port"));
  urls.everything = `http://127.0.0.1:${port}/mcp`;
});

afterAll(() => {
  for (const service of services) service.kill();
  temp.cleanup();
});

interface Case {
  readonly label: string;
  readonly server: () => Record<string, unknown>;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly text: string;
}

const cases: Case[] = [
  {
    label: "a stdio server of SDK v2 that speaks only 2026-07-28",
    server: () => ({ transport: "stdio", command: process.execPath, args: [path.join(bridgeFixtures, "modern-only.mjs")] }),
    tool: "echo",
    args: { text: "modern" },
    text: "echo: modern",
  },
  {
    label: "a streamable-HTTP service of SDK v2 that speaks only 2026-07-28",
    server: () => ({ transport: "streamable_http", url: urls.modern }),
    tool: "echo",
    args: { text: "modern http" },
    text: "echo: modern http",
  },
  {
    label: "a stdio server of SDK 1.32.2 (2025-11-25)",
    server: () => ({ transport: "stdio", command: process.execPath, args: [path.join(bridgeFixtures, "list-changed.mjs")] }),
    tool: "stable",
    args: {},
    text: "stable",
  },
  {
    label: "a stdio server that speaks only 2025-03-26",
    server: () => ({
      transport: "stdio",
      command: process.execPath,
      args: [path.join(bridgeFixtures, "older-revision.mjs")],
      env: { PROTOCOL_VERSION: "2025-03-26" },
    }),
    tool: "hello",
    args: {},
    // The provider's environment values are secrets (E6): the version it reports is one.
    text: "hello from",
  },
  {
    label: "the published server-everything over stdio",
    server: () => ({ transport: "stdio", command: process.execPath, args: [entryOf("@modelcontextprotocol/server-everything"), "stdio"] }),
    tool: "echo",
    args: { message: "everything" },
    text: "everything",
  },
  {
    label: "the published server-everything over streamable HTTP",
    server: () => ({ transport: "streamable_http", url: urls.everything }),
    tool: "echo",
    args: { message: "everything http" },
    text: "everything http",
  },
  {
    label: "the published server-filesystem",
    server: () => ({ transport: "stdio", command: process.execPath, args: [entryOf("@modelcontextprotocol/server-filesystem"), files] }),
    tool: "read_text_file",
    args: { path: path.join(files, "note.txt") },
    text: "a note for the filesystem server",
  },
  {
    label: "the published server-memory",
    server: () => ({
      transport: "stdio",
      command: process.execPath,
      args: [entryOf("@modelcontextprotocol/server-memory")],
      env: { MEMORY_FILE_PATH: path.join(temp.dir, "memory.jsonl") },
    }),
    tool: "read_graph",
    args: {},
    text: "entities",
  },
];

describe("MCP servers of every generation through tools list, call and run", () => {
  cases.forEach((entry, index) => {
    it(`M6 M7 ${entry.label}`, async () => {
      const dir = path.join(temp.dir, `case-${index}`);
      mkdirSync(dir, { recursive: true });
      const servers = path.join(dir, "servers.json");
      writeFileSync(servers, JSON.stringify({ servers: { srv: entry.server() } }));
      const bundle = writeBundle(path.join(dir, "bundle"), JSON.stringify({ version: 3, tools: [`srv.${entry.tool}`] }));
      const journal = path.join(dir, "journal", "journal.db");

      const listed = await runEntry(FIXTURE_HOST, ["tools", "list", "--bundle", bundle, "--discover", "--servers", servers, "--json"]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(`srv.${entry.tool}`);

      const call = await runEntry(FIXTURE_HOST, [
        "call",
        `srv.${entry.tool}`,
        "--args",
        JSON.stringify(entry.args),
        "--servers",
        servers,
        "--approve",
        "yes",
        "--json",
        "--journal",
        journal,
      ]);
      expect(call.code, call.stderr).toBe(0);
      const report = JSON.parse(call.stdout) as { outcome: string; text?: string };
      expect(report.outcome).toBe("succeeded");
      expect(call.stdout).toContain(entry.text);

      const script = path.join(dir, "script.json");
      writeFileSync(script, JSON.stringify([{ text: "calling", toolCalls: [{ name: `srv__${entry.tool}`, arguments: entry.args }] }, { text: "done" }]));
      const run = await runEntry(FIXTURE_HOST, [
        "run",
        "--bundle",
        bundle,
        "--servers",
        servers,
        "--script",
        script,
        "--approve",
        "yes",
        "--message",
        "go",
        "--json",
        "--journal",
        journal,
      ]);
      expect(run.code, run.stderr).toBe(0);
      const turn = JSON.parse(run.stdout) as { completed: boolean; calls: { outcome: string }[] };
      expect(turn.completed).toBe(true);
      expect(turn.calls.map((made) => made.outcome)).toEqual(["succeeded"]);

      const verify = await runEntry(FIXTURE_HOST, ["journal", "verify", "--journal", journal]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    });
  });
});
