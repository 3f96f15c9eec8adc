import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
/** The built example host: what a user runs. */
export const HOST = path.join(REPO, "apps/example-host/dist/host.js");
/** A host whose main registers `fixture.whoami` and `fixture.wait`. */
export const FIXTURES = path.join(REPO, "packages/cli/test/fixtures");
export const FIXTURE_HOST = path.join(FIXTURES, "fixture-host.mjs");
export const COWORKER = path.join(REPO, "examples/coworker");
export const DEMO_SCRIPT = path.join(COWORKER, "demo/script.json");
export const DEMO_POLICY = path.join(COWORKER, "demo/policy.json");

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a host entry to completion with `input` on stdin (closed after). */
export function runEntry(entry: string, args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<Ran> {
  const child = spawn(process.execPath, [entry, ...args], {
    cwd: options.cwd ?? REPO,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.end(options.input ?? "");
  return collect(child);
}

/** Runs the example host. */
export function runHost(args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> {
  return runEntry(HOST, args, options);
}

export function collect(child: ChildProcess): Promise<Ran> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A temp folder removed by the returned cleanup. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `ow-cli-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes a bundle folder with a manifest and the given tools.json text. */
export function writeBundle(dir: string, toolsJson: string, manifest = "---\nname: Test coworker\n---\nUse the tools.\n"): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "manifest.md"), manifest);
  writeFileSync(path.join(dir, "tools.json"), toolsJson);
  return dir;
}

/** Waits until `predicate` holds on the accumulated text of a stream; rejects if the stream ends first. */
export function waitForOutput(stream: NodeJS.ReadableStream, predicate: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (predicate(text)) {
        stream.off("data", onData);
        stream.off("end", onEnd);
        resolve(text);
      }
    };
    const onEnd = () => reject(new Error(`the stream ended before the expected output; it said:\n${text}`));
    stream.on("data", onData);
    stream.once("end", onEnd);
  });
}

/** Whether a process with this id exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `body` against `serve --mcp --http 0` of a host entry (its port read from its
 * banner; `stderr()` is everything it wrote there so far), then stops the server with
 * SIGTERM, also when `body` throws, and answers how it ended: a stop exits 0.
 */
export async function withHttpServer(
  entry: string,
  args: readonly string[],
  body: (server: { port: number; stderr: () => string; child: ChildProcess }) => Promise<void>,
): Promise<Ran> {
  const child = spawn(process.execPath, [entry, "serve", "--mcp", "--http", "0", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  let written = "";
  child.stderr!.on("data", (chunk: Buffer) => (written += chunk.toString()));
  const done = collect(child);
  try {
    const banner = await waitForOutput(child.stderr!, (text) => /127\.0\.0\.1:\d+\/mcp/.test(text));
    await body({ port: Number(/127\.0\.0\.1:(\d+)\/mcp/.exec(banner)![1]), stderr: () => written, child });
  } finally {
    child.kill("SIGTERM");
  }
  const result = await done;
  expect(result.code, result.stderr).toBe(0);
  return result;
}

/** The journal's sessions, as `journal sessions --json` lists them. */
export function sessionsOf(journal: string): Promise<{ sessionId: string; closedAt: string | null; calls: number; openCalls: number }[]> {
  return runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal]).then((ran) => JSON.parse(ran.stdout));
}
