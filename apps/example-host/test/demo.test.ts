import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { acerLauncherPath, createHostRegistry } from "../src/registry.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const host = path.join(repo, "apps/example-host/dist/host.js");
const coworker = path.join(repo, "examples/coworker");
const temp = mkdtempSync(path.join(os.tmpdir(), "ow-host-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Runs the built host; on Linux, records every descendant process seen while it runs. */
function runHost(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; descendants: Set<number> }> {
  const child = spawn(process.execPath, [host, ...args], { cwd: repo, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  const seen = new Set<number>();
  const poll = setInterval(() => {
    if (child.pid !== undefined) for (const pid of descendantsOf(child.pid)) seen.add(pid);
  }, 20);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearInterval(poll);
      resolve({ code, stdout, stderr, descendants: seen });
    });
  });
}

function descendantsOf(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, parent] of parents) {
      if (parent !== pid) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
}

describe("the example host", () => {
  it("registers the two partner packages and the acer provider through its launcher", () => {
    const registry = createHostRegistry();
    expect(registry.natives().map((tool) => tool.name)).toEqual(["example.web_search", "notification.notify"]);
    expect(registry.providers()).toEqual([expect.objectContaining({ namespace: "acer", transport: "stdio", program: acerLauncherPath(), args: [] })]);
    expect(acerLauncherPath()).toBe(path.join(repo, "examples/acer-mcp/bin/acer-mcp-launcher"));
  });

  it("host.js links nothing but node:module as it loads: built-ins and better-sqlite3 are required by the code that needs them", () => {
    const text = readFileSync(host, "utf8");
    const linked = [...text.matchAll(/(?:^|[;\n}])\s*import\s*(?:[\w$]+\s*,?\s*)?(?:\*\s*as\s*[\w$]+|\{[^}]*\})?\s*(?:from\s*)?["']([^"']+)["']/g)].map(
      (match) => match[1],
    );
    expect(linked).toEqual(["node:module"]);
    // Required (by esbuild's require shim, under a minified name) where the code that needs them is evaluated.
    expect(/[\w$]+\("node:http"\)/.test(text)).toBe(true);
    expect(/[\w$]+\("[^"]*better-sqlite3\/lib\/index\.js"\)/.test(text)).toBe(true);
  });

  it("A1 A3 M4 the demo (pnpm start's commands): three calls, one approved by the demo's approver, journal verified, no process left", async () => {
    const journal = path.join(temp, "journal.db");
    const demo = await runHost([
      "run",
      "--bundle",
      coworker,
      "--script",
      path.join(coworker, "demo/script.json"),
      "--policy",
      path.join(coworker, "demo/policy.json"),
      "--approve",
      "yes",
      "--session-id",
      "ses_demo_test",
      "--message",
      "Search, read my battery, notify me.",
      "--journal",
      journal,
    ]);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/call example\.web_search .*\n {2}approved by policy "demo" .*\n {2}succeeded: \{"source":"offline-index"/);
    expect(demo.stdout).toMatch(/call acer\.acer_care_center_batterystatus_get \{\}\n {2}approved by policy "demo" .*\n {2}succeeded: /);
    expect(demo.stdout).toMatch(/call notification\.notify .*\n {2}approved by policy "cli --approve yes"\n {2}(succeeded|failed NOTIFIER_UNAVAILABLE): /);
    expect(demo.stdout).toContain("turn ses_demo_test.t1: answered, 3 call(s)");

    const verify = await runHost(["journal", "verify", "ses_demo_test", "--journal", journal]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^verified: session ses_demo_test, \d+ record\(s\), every chain intact/);

    if (process.platform === "linux") {
      // The acer launcher (sh) and its node server were started and must all be gone.
      expect(demo.descendants.size).toBeGreaterThanOrEqual(2);
      expect([...demo.descendants].filter(alive)).toEqual([]);
    }
  });
});
