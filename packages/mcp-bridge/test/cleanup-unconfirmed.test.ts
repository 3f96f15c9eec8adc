import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES } from "../src/index.js";
import { eventually, fixture, isRunning, marker, processesWithMarker } from "./helpers.js";

// A process frozen by the cgroup v1 freezer sleeps uninterruptibly in the kernel's
// refrigerator: a SIGKILL stays pending until the cgroup is thawed, even for root. That
// makes "a tree whose cleanup cannot be confirmed" real (no mock) and deterministic.
const FREEZER = "/sys/fs/cgroup/freezer";

interface Frozen {
  readonly cgroup: string;
  readonly pid: number;
}

let bridge: McpBridge | undefined;
let frozen: Frozen | undefined;
let scratch: string | undefined;
let tag: string | undefined;

afterEach(async () => {
  // Thawing lets the pending SIGKILL land; then the bridge ends whatever is left.
  if (frozen) writeFileSync(path.join(frozen.cgroup, "freezer.state"), "THAWED");
  await bridge?.dispose();
  if (frozen) {
    const { pid, cgroup } = frozen;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
    await eventually(() => (isRunning(pid) ? undefined : true));
    await eventually(() => {
      try {
        rmdirSync(cgroup);
        return true;
      } catch {
        return existsSync(cgroup) ? undefined : true;
      }
    });
  }
  if (tag) expect(processesWithMarker(tag)).toEqual([]);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  bridge = undefined;
  frozen = undefined;
  scratch = undefined;
  tag = undefined;
});

/** Creates a freezer cgroup, or says why there is none (no cgroup v1 freezer, not root). */
function freezerCgroup(): string | undefined {
  const cgroup = path.join(FREEZER, `mcp-bridge-test-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    mkdirSync(cgroup);
    return cgroup;
  } catch {
    return undefined;
  }
}

describe("unconfirmed cleanup of a stdio tree (M4)", () => {
  it("M4 joinCleanup rejects, for every later caller too, when a grandchild survives SIGKILL (frozen in the kernel)", async (context) => {
    const cgroup = freezerCgroup();
    if (!cgroup) {
      context.skip("needs a writable cgroup v1 freezer (/sys/fs/cgroup/freezer) and root");
      return;
    }
    scratch = mkdtempSync(path.join(tmpdir(), "mcp-bridge-unconfirmed-"));
    tag = marker("unconfirmed");
    const pidFile = path.join(scratch, "grandchildren.pids");
    bridge = new McpBridge(
      [{ transport: "stdio", namespace: "wrapped", program: fixture("wrapper-grandchild.sh"), args: [], env: { PID_FILE: pidFile, TEST_MARKER: tag } }],
      { closeGraceMs: 100 },
    );
    const session = bridge.openSession("frozen");
    const { catalogs } = await session.discover(["wrapped"]);
    expect(catalogs).toHaveLength(1);
    const plain = Number(/^plain (\d+)$/m.exec(readFileSync(pidFile, "utf8"))?.[1]);
    expect(isRunning(plain)).toBe(true);

    frozen = { cgroup, pid: plain };
    writeFileSync(path.join(cgroup, "cgroup.procs"), String(plain));
    writeFileSync(path.join(cgroup, "freezer.state"), "FROZEN");
    await eventually(() => (readFileSync(path.join(cgroup, "freezer.state"), "utf8").trim() === "FROZEN" ? true : undefined));

    await session.close(); // resolves either way: only joinCleanup is evidence
    const failure = await session.joinCleanup().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: MCP_ERROR_CODES.cleanupUnconfirmed });
    expect((failure as Error).message).toContain(`provider "wrapped"`);
    expect((failure as Error).message).toMatch(new RegExp(`still running: [0-9, ]*\\b${plain}\\b`));
    expect(isRunning(plain)).toBe(true); // the survivor is real, not a report

    // Sticky: the failure stays on record for later callers, of the session and of the bridge.
    await expect(session.joinCleanup()).rejects.toMatchObject({ code: MCP_ERROR_CODES.cleanupUnconfirmed });
    await expect(bridge.joinCleanup()).rejects.toMatchObject({ code: MCP_ERROR_CODES.cleanupUnconfirmed });
    await bridge.dispose();
    await expect(bridge.joinCleanup()).rejects.toMatchObject({ code: MCP_ERROR_CODES.cleanupUnconfirmed });
  });
});
