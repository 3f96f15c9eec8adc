import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runnableCommands } from "../tests/consumer/guides.js";
import { builtinModules } from "node:module";
import { type Release, releaseToLocalRegistry } from "../tests/consumer/release.js";
import { bundle, createNpmProject, createScratchProject, emit, type NpmProject, type ScratchProject, tsc } from "../tests/consumer/scratch.js";
import { childEnv, publishedPackages, ROOT, run } from "../tests/consumer/workspace.js";

// The release and its consumers: the repository is versioned, built and published to a
// local registry (Verdaccio on 127.0.0.1), and consumers outside the workspace install
// `@openworker/*` from it by name, with pnpm and with npm. They succeed without the
// source: imports from ESM and CJS, a partner tool and a host compiled against the
// published declarations (skipLibCheck: false), the partner's tests with the testing kit,
// and a host that registers the tool and calls it through the runtime. The code is the
// guides' own (docs/snippets), so the guides cannot drift from what works.
let release: Release;
let project: ScratchProject;
let npmProject: NpmProject;
const peers: LinePeer[] = [];
/** The one full type-check (the slow part): started early, awaited by its test. */
let typeCheck: Promise<{ ok: true } | { ok: false; failure: string }>;

beforeAll(async () => {
  release = await releaseToLocalRegistry();
  [project, npmProject] = await Promise.all([createScratchProject(release), createNpmProject(release)]);
  // The host resolves glossary-tools through its declarations: emit the partner first.
  await emit(project, project.partner);
  typeCheck = tsc(project, ["-p", "tsconfig.check.json"]).then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, failure: failureOf(error) }),
  );
  await Promise.all([bundle(project, project.host), emit(project, path.join(project.checks, "cjs-consumer"))]);
}, 600_000);

afterAll(async () => {
  // A failed assertion must not leave a harness child behind.
  for (const peer of peers) if (peer.child.exitCode === null && peer.child.signalCode === null) peer.child.kill("SIGKILL");
  if (project) rmSync(project.dir, { recursive: true, force: true });
  if (npmProject) rmSync(npmProject.dir, { recursive: true, force: true });
  await release?.dispose();
}, 60_000);

function node(args: readonly string[], cwd: string) {
  return run(process.execPath, [...args], { cwd, env: childEnv(), timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
}

/** The failure text of a child that exited non-zero, for assertion messages. */
function failureOf(error: unknown): string {
  const { code, stdout, stderr, message } = error as { code?: number; stdout?: string; stderr?: string; message?: string };
  return `exit ${code}: ${message}\n${stdout ?? ""}\n${stderr ?? ""}`;
}

async function expectSuccess<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    expect.fail(failureOf(error));
  }
}

/** What the host guide's embedding program prints. */
const EMBED_OUTPUT = [
  "glossary.lookup: succeeded",
  JSON.stringify({ entries: [{ term: "bundle", definition: "A coworker: manifest.md (who it is) and tools.json (the tools it may use)." }], total: 1 }),
  "glossary.lookup: succeeded",
  "notes.list_notes: succeeded",
  "An alias is the name the model sees for a tool.",
  "",
];

/** A newline-delimited JSON-RPC peer on a child's stdio (the `serve --stdio` protocol). */
class LinePeer {
  readonly child: ChildProcess;
  readonly #pending = new Map<number | string, (message: Record<string, unknown>) => void>();
  readonly #requests: Record<string, unknown>[] = [];
  readonly #waiters: ((message: Record<string, unknown>) => void)[] = [];

  constructor(cwd: string, args: readonly string[]) {
    this.child = spawn(process.execPath, [...args], { cwd, env: childEnv(), stdio: ["pipe", "pipe", "pipe"] });
    peers.push(this);
    this.child.stderr!.resume();
    createInterface({ input: this.child.stdout! }).on("line", (line) => {
      const message = JSON.parse(line) as Record<string, unknown>;
      if ("method" in message) {
        if ("id" in message) {
          this.#requests.push(message);
          this.#waiters.splice(0).forEach((wake) => wake(message));
        }
        return;
      }
      this.#pending.get(message.id as number)?.(message);
    });
  }

  send(line: string): Promise<Record<string, unknown>> {
    const { id } = JSON.parse(line) as { id: number };
    const answer = new Promise<Record<string, unknown>>((resolve) => this.#pending.set(id, resolve));
    this.child.stdin!.write(`${line}\n`);
    return answer;
  }

  /** The next request the harness sends the host (e.g. `approval.request`). */
  nextRequest(): Promise<Record<string, unknown>> {
    const waiting = this.#requests.shift();
    return waiting ? Promise.resolve(waiting) : new Promise((resolve) => this.#waiters.push(resolve));
  }

  exited(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }
}

describe("the release, installed by name outside the workspace", () => {
  it("changeset publish puts every public package on the registry at its released version", async () => {
    for (const pkg of publishedPackages()) {
      const version = release.versions[pkg.name]!;
      expect(version, pkg.name).toMatch(/^\d+\.\d+\.\d+$/);
      expect(version, pkg.name).not.toBe("0.0.0");
      const answer = await fetch(`${release.registry.url}${pkg.name.replace("/", "%2f")}`);
      expect(answer.status, pkg.name).toBe(200);
      const document = (await answer.json()) as { "dist-tags": { latest: string }; versions: Record<string, { dependencies?: Record<string, string> }> };
      expect(document["dist-tags"].latest, pkg.name).toBe(version);
      // Internal ranges are versions on the registry, never `workspace:`.
      for (const [name, range] of Object.entries(document.versions[version]!.dependencies ?? {})) {
        expect(range, `${pkg.name} → ${name}`).not.toMatch(/^workspace:/);
        if (name.startsWith("@openworker/")) expect(range, `${pkg.name} → ${name}`).toBe(release.versions[name]);
      }
    }
  });

  it("pnpm installs the released packages by name, and better-sqlite3 without compiling anything", () => {
    expect(path.relative(ROOT, project.dir).startsWith("..")).toBe(true);
    for (const [name, version] of Object.entries(release.versions)) {
      const installed = JSON.parse(readFileSync(path.join(project.dir, "node_modules", name, "package.json"), "utf8")) as { version: string };
      expect(installed.version, name).toBe(version);
    }
    expect(project.installOutput).not.toMatch(/node-gyp|gyp info/);
    expect(project.installOutput).not.toMatch(/Ignored build scripts/);
  }, 60_000);

  it("npm follows the partner guide: installs @openworker/tools-sdk by name, and the package's npm test passes", async () => {
    const installed = JSON.parse(readFileSync(path.join(npmProject.partner, "node_modules", "@openworker", "tools-sdk", "package.json"), "utf8")) as {
      version: string;
    };
    expect(installed.version).toBe(release.versions["@openworker/tools-sdk"]);
    expect(npmProject.installOutput).not.toMatch(/node-gyp|gyp info/);
    const { stdout } = await expectSuccess(run("npm", ["test"], { cwd: npmProject.partner, env: childEnv(), timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }));
    expect(stdout).toMatch(/^(# |ℹ )pass 8$/m);
    expect(stdout).toMatch(/^(# |ℹ )fail 0$/m);
  }, 240_000);

  it("npm follows the host guide: its build passes, and the host calls the partner's tools and an MCP provider through the runtime", async () => {
    await expectSuccess(run("npm", ["run", "build"], { cwd: npmProject.host, env: childEnv(), timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }));
    const { stdout } = await expectSuccess(node(["dist/embed.js"], npmProject.host));
    expect(stdout.split("\n")).toEqual(EMBED_OUTPUT);
  }, 240_000);

  it("a) every entry point of every package loads from ESM and from CommonJS with the same named exports", async () => {
    const specifiers = publishedPackages().flatMap((pkg) => pkg.entries.map((entry) => `${pkg.name}${entry.slice(1)}`));
    const esm = JSON.parse((await expectSuccess(node(["load-esm.mjs", ...specifiers], project.checks))).stdout) as Record<string, string[]>;
    const cjs = JSON.parse((await expectSuccess(node(["load-cjs.cjs", ...specifiers], project.checks))).stdout) as Record<string, string[]>;
    expect(Object.keys(esm).sort()).toEqual([...specifiers].sort());
    expect(cjs).toEqual(esm);
    for (const specifier of specifiers) expect(esm[specifier]!.length, specifier).toBeGreaterThan(0);
    expect(esm["@openworker/tools-sdk"]).toEqual(expect.arrayContaining(["defineTool", "codeTool", "ToolError", "OpenWorkerError", "LIMITS", "modelAlias"]));
    expect(esm["@openworker/tools-sdk/testing"]).toEqual(expect.arrayContaining(["runTool", "createTestContext"]));
    expect(esm["@openworker/registry"]).toContain("ToolRegistry");
    expect(esm["@openworker/runtime"]).toEqual(expect.arrayContaining(["Runtime", "MODEL_PROVIDER_CODES"]));
    expect(esm["@openworker/model-openai"]).toEqual(expect.arrayContaining(["OpenAICompatibleProvider", "OPENAI_PROVIDER_CODES"]));
    expect(esm["@openworker/model-ai-sdk"]).toEqual(expect.arrayContaining(["fromAiSdk"]));
    expect(esm["@openworker/journal"]).toContain("Journal");
    expect(esm["@openworker/cli"]).toEqual(expect.arrayContaining(["mainWithRegistry"]));
    expect(esm["@openworker/harness-client"]).toEqual(expect.arrayContaining(["HarnessClient", "HARNESS_ERROR_CODES"]));
  }, 60_000);

  it("b) the partner tool (ESM), the host and a CommonJS consumer type-check against the published declarations with skipLibCheck: false and exactOptionalPropertyTypes", async () => {
    const config = JSON.parse(readFileSync(path.join(project.dir, "tsconfig.check.json"), "utf8")) as {
      compilerOptions: { skipLibCheck: boolean; exactOptionalPropertyTypes: boolean };
    };
    expect(config.compilerOptions.skipLibCheck).toBe(false);
    expect(config.compilerOptions.exactOptionalPropertyTypes).toBe(true);
    const cjsPackage = JSON.parse(readFileSync(path.join(project.checks, "cjs-consumer", "package.json"), "utf8")) as { type: string };
    expect(cjsPackage.type).toBe("commonjs");
    const result = await typeCheck;
    expect(result.ok ? "" : result.failure).toBe("");
  }, 180_000);

  it("b) the partner package's own tests pass with the published testing kit (its test script, after the compile)", async () => {
    const { scripts } = JSON.parse(readFileSync(path.join(project.partner, "package.json"), "utf8")) as { scripts: { test: string } };
    // The compile is emitted above (the full check is test b's): run what follows it, through a shell as npm does.
    const command = scripts.test.split("&&").at(-1)!.trim();
    expect(command).toBe("node --test dist/*.test.js");
    const { stdout } = await expectSuccess(run("sh", ["-c", command], { cwd: project.partner, env: childEnv(), timeout: 60_000 }));
    // TAP on Node.js 22, the spec reporter on 24 (its default also when not on a terminal).
    expect(stdout).toMatch(/^(# |ℹ )pass 8$/m);
    expect(stdout).toMatch(/^(# |ℹ )fail 0$/m);
  }, 60_000);

  it("b) the partner package publishes dist/ without its compiled tests (files)", async () => {
    const { stdout } = await expectSuccess(run("npm", ["pack", "--dry-run", "--json"], { cwd: project.partner, env: childEnv(), timeout: 60_000 }));
    const [{ files }] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    const packed = files.map((file) => file.path).sort();
    expect(packed).toEqual(expect.arrayContaining(["dist/index.d.ts", "dist/index.js", "dist/lookup.js", "package.json"]));
    expect(packed.filter((file) => file.includes(".test."))).toEqual([]);
  }, 60_000);

  it("A2 the guide's host is one file: partner and OpenWorker code are inside dist/host.js, only better-sqlite3 loads from node_modules", () => {
    const host = readFileSync(path.join(project.host, "dist", "host.js"), "utf8");
    expect(host.startsWith("#!/usr/bin/env node\n")).toBe(true);
    // What the journal hashes as the host executable must hold the partner's tools and the runtime.
    expect(host).toContain("Look terms up in the team glossary.");
    expect(host).toContain("ALIAS_TOO_LONG_FOR_PROVIDER");
    const builtins = new Set(builtinModules);
    // Static imports (one per line in esbuild's output), import("…"), and esbuild's __require("…") for a
    // require() it left to run time (ajv's generated-code templates say require("…") in strings).
    const loaded = [...host.matchAll(/^import\s(?:[^;"]*\sfrom\s*)?"([\w@./:-]+)";$|(?:\bimport|\b__require)\("([\w@./:-]+)"\)/gm)].map(
      (match) => (match[1] ?? match[2])!,
    );
    const outside = loaded.filter((specifier) => !specifier.startsWith("node:") && !builtins.has(specifier));
    expect(outside.length).toBeGreaterThan(0);
    expect(outside.filter((specifier) => !/^\.\.\/.*\/node_modules\/better-sqlite3\//.test(specifier))).toEqual([]);
  });

  it("c) a host embeds the runtime (ESM), registers the partner tools and an MCP provider, and calls them through the runtime", async () => {
    const { stdout } = await expectSuccess(node(["dist/embed.js"], project.host));
    expect(stdout.split("\n")).toEqual(EMBED_OUTPUT);
  }, 60_000);

  it("c) a CommonJS consumer writes a tool with defineTool, unit-tests it, and calls it through Runtime.openWithRegistry", async () => {
    const { stdout } = await expectSuccess(node(["dist/index.js"], path.join(project.checks, "cjs-consumer")));
    expect(JSON.parse(stdout)).toEqual({
      moduleFormat: "commonjs",
      unit: { text: "UNIT" },
      alias: "cjs__shout",
      outcome: "succeeded",
      json: { text: "HELLO" },
      verified: true,
    });
  }, 60_000);

  it("the guides' configuration files (bundle, servers.json, policy, script) parse with the packages' own parsers", async () => {
    const { stdout } = await expectSuccess(node([path.join(project.checks, "check-config-files.mjs")], project.host));
    expect(JSON.parse(stdout)).toEqual({
      coworker: "Glossary helper",
      selection: { version: 3, tools: ["glossary.lookup", "glossary.diagram", "notes.list_notes", "memory.read_graph"] },
      servers: ["tickets:stdio", "wiki:streamable_http"],
      policy: "my-host",
      scriptSteps: 2,
    });
  }, 60_000);

  it("every `shell: run` command of the guides succeeds against the stock CLI host built from the packages", async () => {
    const commands = runnableCommands();
    expect(commands.length).toBeGreaterThan(0);
    for (const { guide, line, command } of commands) {
      try {
        await run("sh", ["-c", command], { cwd: project.host, env: childEnv(), timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
      } catch (error) {
        expect.fail(`${guide}:${line}: \`${command}\` failed: ${failureOf(error)}`);
      }
    }
  }, 180_000);

  it("M1 A3 the guide's run takes a turn in which the model calls the partner's tool and a published MCP server (server-memory), and the journal verifies", async () => {
    const journal = path.join(project.host, "run-turn.db");
    const args = [
      "dist/host.js",
      "run",
      "--bundle",
      "coworker",
      "--script",
      "script.json",
      "--policy",
      "policy.json",
      "--approve",
      "no",
      "--message",
      "What is an alias?",
      "--json",
      "--journal",
      journal,
    ];
    const report = JSON.parse((await expectSuccess(node(args, project.host))).stdout) as {
      completed: boolean;
      text: string;
      unavailableProviders: unknown[];
      calls: { qualifiedName: string; outcome: string; json?: unknown }[];
    };
    expect(report).toMatchObject({ completed: true, text: "An alias is the name the model sees for a tool.", unavailableProviders: [] });
    expect(report.calls.map((call) => [call.qualifiedName, call.outcome])).toEqual([
      ["glossary.lookup", "succeeded"],
      ["memory.read_graph", "succeeded"],
    ]);
    expect(report.calls[1]!.json).toMatchObject({ entities: [], relations: [] });
    await expectSuccess(node(["dist/host.js", "journal", "verify", "--journal", journal], project.host));
  }, 60_000);

  it("the host guide's stdio harness transcript gets a result for every request, in order", async () => {
    const peer = new LinePeer(project.host, ["dist/host.js", "serve", "--stdio"]);
    const lines = readFileSync(path.join(project.host, "harness-session.jsonl"), "utf8").split("\n").filter(Boolean);
    const answers: Record<string, unknown>[] = [];
    for (const line of lines) answers.push(await peer.send(line));
    expect(answers.map((answer) => answer.error)).toEqual(lines.map(() => undefined));
    expect(answers[0]!.result).toMatchObject({ sessionId: "ses_harness", coworker: "Glossary helper" });
    expect(answers[1]!.result).toMatchObject({ outcome: "succeeded", qualifiedName: "glossary.lookup", json: { total: 1 } });
    expect(answers.at(-1)!.result).toEqual({ shuttingDown: true });
    // The guide says: after `shutdown`, close stdin (the harness also ends when stdin closes).
    peer.child.stdin!.end();
    expect(await peer.exited()).toBe(0);
  }, 60_000);

  it("A3 after a host is killed mid-call, reopening the journal marks the call interrupted, replays nothing, and the chain verifies (operate guide)", async () => {
    const peer = new LinePeer(project.host, ["dist/host.js", "serve", "--stdio"]);
    const open = await peer.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session.open", params: { bundle: "coworker", sessionId: "ses_crash" } }));
    expect(open.error).toBeUndefined();
    // No policy: glossary.lookup asks a person, so the call waits for the host's answer...
    void peer.send(
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "call", params: { sessionId: "ses_crash", name: "glossary.lookup", arguments: { prefix: "alias" } } }),
    );
    const approval = await peer.nextRequest();
    expect(approval).toMatchObject({ method: "approval.request", params: { qualifiedName: "glossary.lookup" } });
    // ...and the host dies before answering. The request record is committed before the
    // approval is asked (group commit on the next tick); give that tick time to finish.
    await new Promise((resolve) => setTimeout(resolve, 200));
    peer.child.kill("SIGKILL");
    await peer.exited();

    const recovered = await expectSuccess(node(["dist/recover-journal.js"], project.host));
    expect(recovered.stdout).toMatch(/^interrupted: glossary\.lookup \(ses_crash\.c1, session ses_crash\); it never started$/m);
    const again = await expectSuccess(node(["dist/recover-journal.js"], project.host));
    expect(again.stdout).toBe("");
    const verified = await expectSuccess(node(["dist/verify-journal.js"], project.host));
    expect(verified.stdout).toMatch(/^intact: \d+ sessions, \d+ records$/m);
    const session = await expectSuccess(node(["dist/read-session.js", "ses_crash"], project.host));
    expect(session.stdout).toMatch(/ses_crash\.c1 glossary\.lookup: no decision, interrupted \(JOURNAL_INTERRUPTED\)/);
  }, 60_000);
});
