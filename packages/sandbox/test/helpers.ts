import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The probe provider: read, write, connect and env tools, written with the MCP SDK. */
export const probeServer = path.join(here, "fixtures", "probe-server.mjs");

/** A host that runs the probe through the built launcher, starts a slow call and waits to be killed. */
export const killedHost = path.join(here, "fixtures", "killed-host.mjs");

const sdk = realpathSync(createRequire(import.meta.url).resolve("@modelcontextprotocol/sdk/package.json"));

/**
 * What the probe needs to read to run: its own folder and the packages it imports (pnpm
 * keeps them behind links into the workspace's store, so the store too).
 */
export const probeReads: readonly string[] = [
  path.join(here, "fixtures"),
  path.resolve(here, "..", "node_modules"),
  sdk.slice(0, sdk.indexOf("/node_modules/.pnpm/") + "/node_modules/.pnpm".length),
];

/** A fresh folder under the system's temporary folder. */
export const freshFolder = (prefix: string): string => mkdtempSync(path.join(tmpdir(), prefix));

/**
 * Fails loudly where bubblewrap cannot run: these tests prove isolation, and a skip would
 * report a sandbox nobody saw working. CI installs bubblewrap (`.ci/run`).
 */
export function requireBubblewrap(): void {
  const probe = spawnSync("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"], { encoding: "utf8" });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `bubblewrap cannot run here (${probe.error?.message ?? probe.stderr.trim()}): install it (apt-get install bubblewrap) on a Linux machine that allows user namespaces; these tests prove the sandbox and do not skip`,
    );
  }
}

/** Pids of running (non-zombie) processes whose environment contains `marker`. */
export function processesWithMarker(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (state === "Z" || state === "X") continue;
      if (readFileSync(`/proc/${entry}/environ`, "latin1").includes(marker)) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}
