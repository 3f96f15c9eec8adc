import { readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PassThrough } from "node:stream";
import { ToolRegistry } from "@openworker/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_CODES, runCli } from "../src/index.js";
import { REPO, tempDir, writeBundle } from "./helpers.js";

const temp = tempDir("sandbox");
afterAll(() => temp.cleanup());
const probe = path.join(REPO, "packages/sandbox/test/fixtures/probe-server.mjs");
const sdk = realpathSync(createRequire(path.join(REPO, "packages/sandbox/package.json")).resolve("@modelcontextprotocol/sdk/package.json"));
// The probe, the packages it imports and pnpm's store behind their links: all it may read besides the system.
const probeReads = [
  path.dirname(probe),
  path.join(REPO, "packages/sandbox/node_modules"),
  sdk.slice(0, sdk.indexOf("/node_modules/.pnpm/") + "/node_modules/.pnpm".length),
];
const marker = `cli-sandbox-${process.pid}`;

beforeAll(() => {
  process.env.CLI_SANDBOX_CANARY = "host-secret";
  writeFileSync(path.join(temp.dir, "allowed.txt"), "allowed-contents");
  writeFileSync(
    path.join(temp.dir, "servers.json"),
    JSON.stringify({
      servers: {
        probe: {
          transport: "stdio",
          command: process.execPath,
          args: [probe],
          env: { PROBE_MARKER: marker },
          placement: "sandbox",
          sandbox: { read: [...probeReads, path.join(temp.dir, "allowed.txt")] },
        },
      },
    }),
  );
});
afterAll(() => {
  delete process.env.CLI_SANDBOX_CANARY;
});

async function cli(argv: readonly string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = { out: "", err: "" };
  stdout.on("data", (chunk) => (text.out += chunk));
  stderr.on("data", (chunk) => (text.err += chunk));
  const code = await runCli(new ToolRegistry(), { argv: [...argv], programName: "host", env: {}, stdout, stderr, stdin: new PassThrough() });
  return { code, ...text };
}

function call(tool: string, args: Record<string, unknown>) {
  const bundle = writeBundle(path.join(temp.dir, "bundle"), JSON.stringify({ version: 3, tools: [`probe.${tool}`] }));
  return cli([
    "--servers",
    path.join(temp.dir, "servers.json"),
    "call",
    `probe.${tool}`,
    "--args",
    JSON.stringify(args),
    "--bundle",
    bundle,
    "--approve",
    "yes",
    "--json",
    "--workspace",
    temp.dir,
    "--journal",
    path.join(temp.dir, "journal.db"),
  ]);
}

function processesWithMarker(tag: string): string[] {
  return readdirSync("/proc").filter((entry) => {
    try {
      return /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/environ`, "latin1").includes(tag);
    } catch {
      return false;
    }
  });
}

describe("the stock CLI's sandbox (Linux, real bwrap)", () => {
  it("A4 M4 E6 without a launcher of the host's, call runs a sandbox-placed provider under bubblewrap through the governed pipeline, with its policy, and leaves no process", async () => {
    const allowed = await call("read_file", { path: path.join(temp.dir, "allowed.txt") });
    expect(allowed.code, allowed.err).toBe(EXIT_CODES.ok);
    expect(allowed.out).toContain("ok allowed-contents");
    const canary = await call("read_file", { path: path.join(temp.dir, "servers.json") });
    expect(canary.code, canary.err).toBe(EXIT_CODES.ok);
    expect(canary.out).toContain("refused ENOENT");
    const env = await call("env", { name: "CLI_SANDBOX_CANARY" });
    expect(env.out).toContain("unset");
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it("A4 A2 tools list and journal show display the provider's placement and sandbox policy", async () => {
    const listed = await cli(["--servers", path.join(temp.dir, "servers.json"), "tools", "list", "--json"]);
    expect(listed.code, listed.err).toBe(EXIT_CODES.ok);
    const provider = (JSON.parse(listed.out) as { providers: { placement: string; sandbox?: { read?: string[] } }[] }).providers[0]!;
    expect(provider.placement).toBe("sandbox");
    expect(provider.sandbox?.read).toContain(path.join(temp.dir, "allowed.txt"));
    const table = await cli(["--servers", path.join(temp.dir, "servers.json"), "tools", "list"]);
    expect(table.out).toMatch(/probe +stdio +sandbox \(read 4, write 0, network none\)/);
    const journal = path.join(temp.dir, "journal.db");
    const sessions = JSON.parse((await cli(["journal", "sessions", "--json", "--journal", journal])).out) as { sessionId: string }[];
    const shown = await cli(["journal", "show", sessions[0]!.sessionId, "--journal", journal]);
    expect(shown.code, shown.err).toBe(EXIT_CODES.ok);
    expect(shown.out).toContain("sandbox   probe: {");
    expect(shown.out).toContain("allowed.txt");
    const json = JSON.parse((await cli(["journal", "show", sessions[0]!.sessionId, "--json", "--journal", journal])).out) as {
      sandboxedProviders?: Record<string, { placement: string }>;
    };
    expect(json.sandboxedProviders?.probe?.placement).toBe("sandbox");
  });
});
