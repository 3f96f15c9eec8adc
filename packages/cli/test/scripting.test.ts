import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collect, FIXTURE_HOST, HOST, REPO, runEntry, tempDir, waitForOutput, writeBundle } from "./helpers.js";

const temp = tempDir("scripting");
afterAll(() => temp.cleanup());

const CLI_PACKAGE = JSON.parse(readFileSync(path.join(REPO, "packages/cli/package.json"), "utf8")) as { version: string };
const COMMANDS = [
  ["tools", "list"],
  ["tools", "check"],
  ["call"],
  ["run"],
  ["serve"],
  ["journal", "sessions"],
  ["journal", "show"],
  ["journal", "verify"],
  ["journal", "export"],
  ["journal", "approvals"],
  ["journal", "revoke-approvals"],
];

/** A bundle selecting `fixture.whoami` and the tools of the MCP provider `down`, whose process exits at once. */
function bundleWithDownProvider(): { bundle: string; servers: string; script: string } {
  const bundle = writeBundle(path.join(temp.dir, "down"), JSON.stringify({ version: 3, tools: ["fixture.whoami", "down.anything"] }));
  const servers = path.join(temp.dir, "down-servers.json");
  writeFileSync(servers, JSON.stringify({ servers: { down: { transport: "stdio", command: process.execPath, args: ["-e", "process.exit(3)"] } } }));
  const script = path.join(temp.dir, "hello.json");
  writeFileSync(script, JSON.stringify([{ text: "hello" }]));
  return { bundle, servers, script };
}

describe("--version", () => {
  it("--version prints the CLI's version and exits 0", async () => {
    const result = await runEntry(FIXTURE_HOST, ["--version"]);
    expect(result).toMatchObject({ code: 0, stdout: `${CLI_PACKAGE.version}\n`, stderr: "" });
    const json = await runEntry(FIXTURE_HOST, ["--version", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ name: "@openworker/cli", version: CLI_PACKAGE.version });
  });

  it("--version of a host that bundles the CLI prints the CLI's version, not the host's", async () => {
    const result = await runEntry(HOST, ["--version"]);
    expect(result).toMatchObject({ code: 0, stdout: `${CLI_PACKAGE.version}\n` });
  });
});

describe("usage on stderr", () => {
  it("a bare host prints its usage on stderr, nothing on stdout, and exits 2", async () => {
    const result = await runEntry(FIXTURE_HOST, []);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^usage: fixture-host\.mjs <command> \[options\]/);
    // Asked for, help is the command's result: stdout, exit 0.
    const asked = await runEntry(FIXTURE_HOST, ["--help"]);
    expect(asked.code).toBe(0);
    expect(asked.stdout).toMatch(/^usage: fixture-host\.mjs <command> \[options\]/);
  });
});

describe("--json", () => {
  it("under --json an error is one JSON line on stderr with its code, message and hint", async () => {
    const result = await runEntry(FIXTURE_HOST, ["call", "fixture.whoami", "--args", "{not json", "--json"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      error: { code: "CLI_ARGUMENTS_INVALID", message: expect.stringContaining("--args is not JSON"), hint: expect.any(String) },
    });
    // A usage error keeps its exit code under --json.
    const usage = await runEntry(FIXTURE_HOST, ["tools", "list", "--frob", "--json"]);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr.trim())).toMatchObject({ error: { code: "CLI_USAGE", hint: expect.stringContaining("tools list --help") } });
  });

  it("A3 run --message --json prints the turn's report as one JSON document: session, turn, calls", async () => {
    const bundle = writeBundle(path.join(temp.dir, "whoami"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const script = path.join(temp.dir, "whoami.json");
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "fixture__whoami", arguments: {} }] }, { text: "done" }]));
    const journal = path.join(temp.dir, "run-json.db");
    const result = await runEntry(FIXTURE_HOST, [
      "run",
      "--bundle",
      bundle,
      "--script",
      script,
      "--approve",
      "yes",
      "--session-id",
      "ses_json",
      "--message",
      "who",
      "--json",
      "--journal",
      journal,
    ]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ sessionId: "ses_json", turnId: "ses_json.t1", completed: true, reason: "answered", text: "done", unavailableProviders: [] });
    expect(report.calls).toEqual([expect.objectContaining({ qualifiedName: "fixture.whoami", outcome: "succeeded", images: 0 })]);
    // The interactive loop prints a transcript: --json there is a usage error.
    const loop = await runEntry(FIXTURE_HOST, ["run", "--bundle", bundle, "--script", script, "--json", "--journal", journal]);
    expect(loop.code).toBe(2);
    expect(JSON.parse(loop.stderr.trim()).error.message).toContain("--json needs --message");
  });
});

describe("exit codes a script can tell apart", () => {
  it("M1 run --message exits 3 with CLI_PROVIDER_UNAVAILABLE naming a selected MCP provider that could not be reached for the turn", async () => {
    const { bundle, servers, script } = bundleWithDownProvider();
    const journal = path.join(temp.dir, "down.db");
    const result = await runEntry(FIXTURE_HOST, ["run", "--bundle", bundle, "--servers", servers, "--script", script, "--message", "hi", "--journal", journal]);
    expect(result.code).toBe(3);
    // The turn itself answered, and its transcript is shown.
    expect(result.stdout).toMatch(/: answered, 0 call\(s\)/);
    expect(result.stderr).toMatch(/^error CLI_PROVIDER_UNAVAILABLE: the turn ran without the tools of MCP provider "down", which could not be reached: /m);
    const json = await runEntry(FIXTURE_HOST, [
      "run",
      "--bundle",
      bundle,
      "--servers",
      servers,
      "--script",
      script,
      "--message",
      "hi",
      "--json",
      "--journal",
      journal,
    ]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout).unavailableProviders).toEqual([{ namespace: "down", message: expect.stringContaining("down") }]);
    expect(JSON.parse(json.stderr.trim().split("\n").at(-1)!).error.code).toBe("CLI_PROVIDER_UNAVAILABLE");
  });

  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const)("E4 call stopped by %s exits %i, as a shell reports a process that signal ended", async (signal, code) => {
    const child = spawn(process.execPath, [FIXTURE_HOST, "call", "fixture.wait", "--approve", "yes", "--journal", path.join(temp.dir, `stop-${signal}.db`)], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const done = collect(child);
    await waitForOutput(child.stderr!, (text) => text.includes("waiting for cancellation"));
    child.kill(signal);
    const result = await done;
    expect(result.code).toBe(code);
    expect(result.stdout).toMatch(/cancelled/);
    expect(result.stderr).toMatch(/^error CLI_INTERRUPTED: /m);
  });
});

describe("help and errors speak to users", () => {
  it("B6 call without --bundle in a folder with no tools.json names the tool, not a field of a tools.json", async () => {
    const result = await runEntry(FIXTURE_HOST, ["call", "x.y", "--journal", path.join(temp.dir, "no-bundle.db")], { cwd: temp.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error NAMESPACE_UNKNOWN: call: tool "x\.y": no native tool or MCP provider has namespace "x" \(registered namespaces: fixture\)/m,
    );
    expect(result.stderr).not.toContain("tools.json");
    expect(result.stderr).not.toContain("tools check --bundle");
    const unregistered = await runEntry(FIXTURE_HOST, ["call", "fixture.nope", "--journal", path.join(temp.dir, "no-bundle.db")], { cwd: temp.dir });
    expect(unregistered.stderr).toMatch(/^error TOOL_NOT_REGISTERED: call: tool "fixture\.nope" is not registered/m);
    expect(unregistered.stderr).not.toContain("tools.json");
  });

  it("help texts and the CLI's own errors cite no requirement ids and no source paths", async () => {
    const texts = [(await runEntry(FIXTURE_HOST, ["--help"])).stdout];
    for (const words of COMMANDS) texts.push((await runEntry(FIXTURE_HOST, [...words, "--help"])).stdout);
    const bundle = writeBundle(path.join(temp.dir, "echo"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    texts.push((await runEntry(FIXTURE_HOST, ["call", "fixture.wait", "--bundle", bundle, "--journal", path.join(temp.dir, "ids.db")])).stderr);
    for (const text of texts) {
      expect(text).not.toMatch(/\([A-Z][0-9]/);
      expect(text).not.toMatch(/\b[ABEILMNT][0-9]{1,2}\b/);
      expect(text).not.toContain("packages/");
    }
  });
});
