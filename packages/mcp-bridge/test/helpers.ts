import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** A hostile or helper fixture under test/fixtures. */
export const fixture = (name: string): string => path.join(here, "fixtures", name);

/** The real third-party server: `node <dist>/index.js stdio`. */
export const everythingEntry = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist", "index.js");

/** The acer example, started through its wrapper script. */
export const acerLauncher = path.resolve(here, "../../../examples/acer-mcp/bin/acer-mcp-launcher");

/** Pids of running (non-zombie) processes whose environment contains `marker`. */
export function processesWithMarker(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!isRunning(Number(entry))) continue;
      if (readFileSync(`/proc/${entry}/environ`, "latin1").includes(marker)) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** True while any thread of `pid` runs (a zombie counts as gone, unless its main thread alone has exited). */
export function isRunning(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).some((task) => {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "latin1");
        const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
        return state !== "Z" && state !== "X";
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** True when `pid` shows as a zombie in /proc while another of its threads still runs. */
export function isZombieLeaderWithLiveThreads(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.charAt(stat.lastIndexOf(")") + 2) === "Z" && isRunning(pid);
  } catch {
    return false;
  }
}

/** Polls `check` until it returns a value that is not undefined (no timing assertion: the test timeout bounds it). */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, intervalMs = 20): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A unique marker to find the processes of one test through their environment. */
export const marker = (label: string): string => `mcp-bridge-test-${label}-${process.pid}-${Math.random().toString(36).slice(2)}`;
