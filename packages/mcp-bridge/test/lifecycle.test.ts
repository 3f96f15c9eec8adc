import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES } from "../src/index.js";
import { acerLauncher, eventually, fixture, isRunning, isZombieLeaderWithLiveThreads, marker, processesWithMarker } from "./helpers.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mcp-bridge-lifecycle-"));

/** The pids wrapper-grandchild.sh wrote, by kind (plain, ignores-term, setsid). */
function grandchildren(pidFile: string): Record<string, number> {
  return Object.fromEntries(
    readFileSync(pidFile, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split(" "))
      .map(([kind, pid]) => [kind, Number(pid)]),
  );
}

/** True when `pid` leads a session of its own (its session id, field 6 of /proc stat, is its pid). */
function leadsOwnSession(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3] === String(pid);
  } catch {
    return false; // gone meanwhile
  }
}

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe("process lifecycle (M4)", () => {
  it("M4 ends the whole tree of a wrapper: plain, SIGTERM-ignoring and setsid grandchildren included", async () => {
    const pidFile = path.join(scratch, "grandchildren.pids");
    const bridge = new McpBridge(
      [{ transport: "stdio", namespace: "wrapped", program: fixture("wrapper-grandchild.sh"), args: [], env: { PID_FILE: pidFile } }],
      { closeGraceMs: 200 },
    );
    const session = bridge.openSession("wrapped");
    const { catalogs } = await session.discover(["wrapped"]);
    expect(catalogs[0]?.tools).toHaveLength(3);
    const pids = grandchildren(pidFile);
    expect(Object.keys(pids).sort()).toEqual(["ignores-term", "plain", "setsid"]);
    for (const pid of Object.values(pids)) expect(isRunning(pid)).toBe(true);
    await session.close();
    await session.joinCleanup();
    for (const pid of Object.values(pids)) expect(isRunning(pid)).toBe(false);
    await bridge.dispose();
    await bridge.joinCleanup();
  });

  it("M4 a setsid daemon of a provider that then exits on its own is ended at close, though no link leads to it any more", async () => {
    const pidFile = path.join(scratch, "daemon.pid");
    const bridge = new McpBridge([{ transport: "stdio", namespace: "daemon", program: fixture("daemon-then-exit.sh"), args: [], env: { PID_FILE: pidFile } }], {
      closeGraceMs: 200,
    });
    const session = bridge.openSession("daemon");
    const { catalogs } = await session.discover(["daemon"]);
    expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["noop"]);
    const daemon = Number(readFileSync(pidFile, "utf8").trim());
    expect(isRunning(daemon)).toBe(true);
    // The provider exits on its own; the daemon is re-parented away from its tree.
    for (let waited = 0; session.connected("daemon") && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(session.connected("daemon")).toBe(false);
    await session.close();
    await session.joinCleanup();
    expect(isRunning(daemon)).toBe(false);
    await bridge.dispose();
    await bridge.joinCleanup();
  });

  it("M4 a daemon forked after the last note, whose parent then exits, is found by the mark its environment carries and ended at close", async () => {
    const pidFile = path.join(scratch, "late-daemon.pid");
    const bridge = new McpBridge(
      [{ transport: "stdio", namespace: "late", program: process.execPath, args: [fixture("daemon-after-list.mjs")], env: { PID_FILE: pidFile } }],
      { closeGraceMs: 200 },
    );
    // A process of this machine started after the provider, carrying no mark: left alone.
    const bystander = spawn("sleep", ["600"], { detached: true, stdio: "ignore" });
    let daemon = 0;
    try {
      const session = bridge.openSession("late");
      const { catalogs } = await session.discover(["late"]);
      expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["noop"]);
      for (let waited = 0; session.connected("late") && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(session.connected("late")).toBe(false);
      daemon = Number(readFileSync(pidFile, "utf8").trim());
      expect(isRunning(daemon)).toBe(true);
      expect(readFileSync(`/proc/${daemon}/environ`, "latin1")).toContain("OPENWORKER_PROVIDER_TREE=");
      await session.close();
      await session.joinCleanup();
      expect(isRunning(daemon)).toBe(false);
      expect(isRunning(bystander.pid as number)).toBe(true);
    } finally {
      await bridge.dispose();
      if (daemon > 0 && isRunning(daemon)) process.kill(daemon, "SIGKILL");
      bystander.kill("SIGKILL");
    }
  });

  it("M4 a descendant that keeps re-spawning itself into new sessions is rescanned for by its mark until none is left before cleanup is confirmed", async () => {
    const tag = marker("hopper");
    const bridge = new McpBridge(
      [{ transport: "stdio", namespace: "hopper", program: process.execPath, args: [fixture("hopper-provider.mjs")], env: { TEST_MARKER: tag } }],
      {
        closeGraceMs: 300,
      },
    );
    try {
      const session = bridge.openSession("hopper");
      const { catalogs } = await session.discover(["hopper"]);
      expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["noop"]);
      // The chain has left the provider's group: a generation with a session of its own runs.
      await eventually(() => (processesWithMarker(tag).some(leadsOwnSession) ? true : undefined));
      await session.close();
      await session.joinCleanup();
      // Confirmed: no process of the tree is left, not even the generation started last.
      expect(processesWithMarker(tag)).toEqual([]);
    } finally {
      await bridge.dispose();
      // Should the chain survive (the check failed), end it: each round may find a new generation.
      for (let round = 0; round < 50 && processesWithMarker(tag).length > 0; round++) {
        for (const pid of processesWithMarker(tag)) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // Gone meanwhile.
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  });

  it("M4 a host that exits without dispose() takes its providers' trees with it, a setsid grandchild included (exit hook, tree mark)", async () => {
    expect(existsSync(path.resolve(fixture("exit-without-dispose.mjs"), "../../../dist/index.js")), "build the bridge first (pnpm turbo run build)").toBe(true);
    const pidFile = path.join(scratch, "exit-hook.pids");
    const host = spawnSync(process.execPath, [fixture("exit-without-dispose.mjs"), fixture("wrapper-grandchild.sh"), pidFile], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(host.status, host.stderr).toBe(0);
    const pids = grandchildren(pidFile);
    expect(Object.keys(pids).sort()).toEqual(["ignores-term", "plain", "setsid"]);
    try {
      // SIGKILL is sent before the host is gone; the kernel takes a moment to tear down.
      const left = await Promise.race([
        eventually(() => (Object.values(pids).some(isRunning) ? undefined : [])),
        new Promise<number[]>((resolve) => setTimeout(() => resolve(Object.values(pids).filter(isRunning)), 5_000)),
      ]);
      expect(left).toEqual([]);
    } finally {
      for (const pid of Object.values(pids)) if (isRunning(pid)) process.kill(pid, "SIGKILL");
    }
  });

  it.each(["SIGKILL", "SIGTERM"] as const)(
    "M4 a host killed by %s (no exit hook runs) still takes its providers' trees with it, a setsid grandchild included (the reaper)",
    async (signal) => {
      const pidFile = path.join(scratch, `killed-host-${signal}.pids`);
      const host = spawn(process.execPath, [fixture("killed-host.mjs"), fixture("wrapper-grandchild.sh"), pidFile], { stdio: ["ignore", "pipe", "inherit"] });
      await new Promise<void>((resolve, reject) => {
        host.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
        host.once("exit", (code) => reject(new Error(`the host exited (${code}) before its providers were up`)));
      });
      const pids = grandchildren(pidFile);
      expect(Object.keys(pids).sort()).toEqual(["ignores-term", "plain", "setsid"]);
      try {
        host.kill(signal);
        // The reaper sends SIGTERM, then SIGKILL a second later; the kernel takes a moment more.
        const left = await Promise.race([
          eventually(() => (Object.values(pids).some(isRunning) ? undefined : [])),
          new Promise<number[]>((resolve) => setTimeout(() => resolve(Object.values(pids).filter(isRunning)), 8_000)),
        ]);
        expect(left).toEqual([]);
      } finally {
        for (const pid of Object.values(pids)) if (isRunning(pid)) process.kill(pid, "SIGKILL");
      }
    },
  );

  it("M4 a grandchild whose main thread exited while another runs is not taken for gone: it is ended too", async (context) => {
    if (spawnSync("python3", ["-c", "import ctypes, threading"], { stdio: "ignore" }).status !== 0) {
      context.skip("needs python3 (with ctypes) to end a main thread while another runs");
      return;
    }
    const pidFile = path.join(scratch, "thread-leader.pid");
    const tag = marker("thread-leader");
    const bridge = new McpBridge(
      [{ transport: "stdio", namespace: "threads", program: fixture("wrapper-thread-leader.sh"), args: [], env: { PID_FILE: pidFile, TEST_MARKER: tag } }],
      { closeGraceMs: 200 },
    );
    let pid = 0;
    try {
      const session = bridge.openSession("threads");
      await session.discover(["threads"]);
      pid = Number(readFileSync(pidFile, "utf8").trim());
      // /proc now shows it as a zombie although its second thread runs.
      await eventually(() => (isZombieLeaderWithLiveThreads(pid) ? true : undefined));
      await session.close();
      await session.joinCleanup();
      expect(isRunning(pid)).toBe(false);
      expect(processesWithMarker(tag)).toEqual([]);
    } finally {
      await bridge.dispose();
      // Should the check fail, the process it missed must not outlive the test.
      if (pid > 0 && isRunning(pid)) process.kill(pid, "SIGKILL");
    }
  });

  it("M1/M4 runs the acer example through its launcher and leaves neither the wrapper nor node behind", async () => {
    expect(existsSync(path.resolve(acerLauncher, "../../dist/server.js")), "build examples/acer-mcp first (pnpm turbo run build)").toBe(true);
    const tag = marker("acer");
    const bridge = new McpBridge([{ transport: "stdio", namespace: "acer", program: acerLauncher, args: [], env: { TEST_MARKER: tag } }], {
      closeGraceMs: 500,
    });
    const session = bridge.openSession("acer");
    const { catalogs } = await session.discover(["acer"]);
    expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["acer_care_center_batterystatus_get"]);
    const result = await session.callTool("acer", "acer_care_center_batterystatus_get", {}, {});
    expect(result.outcome).toBe("succeeded");
    expect(result.output?.json).toMatchObject({ present: expect.any(Boolean) });
    expect(processesWithMarker(tag)).toHaveLength(2); // sh launcher + node
    await bridge.dispose();
    await bridge.joinCleanup();
    expect(processesWithMarker(tag)).toEqual([]);
  });

  it("M4 opens and closes 200 sessions against a wrapper-launched server and leaves no process", async () => {
    const tag = marker("sessions");
    const bridge = new McpBridge([{ transport: "stdio", namespace: "sh", program: fixture("sh-wrapper.sh"), args: [], env: { TEST_MARKER: tag } }], {
      closeGraceMs: 500,
    });
    let next = 0;
    let peak = 0;
    const worker = async () => {
      for (let index = next++; index < 200; index = next++) {
        const session = bridge.openSession(`session-${index}`);
        const { catalogs } = await session.discover(["sh"]);
        expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["ping"]);
        if (index % 25 === 0) peak = Math.max(peak, processesWithMarker(tag).length);
        expect((await session.callTool("sh", "ping", {}, {})).output?.text).toBe("pong");
        await session.close();
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    await bridge.joinCleanup();
    expect(peak).toBeGreaterThanOrEqual(2);
    expect(processesWithMarker(tag)).toEqual([]);
    await bridge.dispose();
    // 200 starts and verified closes take about 27 s on a quiet 2-core machine: room for a busy one.
  }, 90_000);

  it("M4 dispose() closes every session, is idempotent, and refuses new sessions", async () => {
    const tag = marker("dispose");
    const bridge = new McpBridge([{ transport: "stdio", namespace: "sh", program: fixture("sh-wrapper.sh"), args: [], env: { TEST_MARKER: tag } }], {
      closeGraceMs: 500,
    });
    await Promise.all(["a", "b", "c"].map((id) => bridge.openSession(id).discover(["sh"])));
    expect(processesWithMarker(tag)).toHaveLength(6);
    const first = bridge.dispose();
    expect(bridge.dispose()).toBe(first);
    await first;
    await bridge.joinCleanup();
    expect(processesWithMarker(tag)).toEqual([]);
    expect(() => bridge.openSession("late")).toThrow(expect.objectContaining({ code: MCP_ERROR_CODES.bridgeDisposed }));
  });

  it("M4 a session opens nothing until discover(), and one session's close leaves another's provider running", async () => {
    const tag = marker("isolation");
    const bridge = new McpBridge([{ transport: "stdio", namespace: "sh", program: fixture("sh-wrapper.sh"), args: [], env: { TEST_MARKER: tag } }], {
      closeGraceMs: 500,
    });
    const first = bridge.openSession("first");
    const second = bridge.openSession("second");
    expect(bridge.openSession("first")).toBe(first);
    expect(processesWithMarker(tag)).toEqual([]);
    await Promise.all([first.discover(["sh"]), second.discover(["sh"])]);
    await first.close();
    expect(processesWithMarker(tag)).toHaveLength(2);
    expect((await second.callTool("sh", "ping", {}, {})).outcome).toBe("succeeded");
    await bridge.dispose();
    await bridge.joinCleanup();
  });
});
