import { spawnSync, type ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { groupRunning, liveTree, processesCarrying, signalTree, stillRunning, type ProcessIdentity, type TreeMark } from "./probe.js";

/** What ending one provider's process tree took, and whether it is confirmed gone (M4). */
export interface TerminationReport {
  /** True when no process of the tree is left running. */
  readonly confirmed: boolean;
  /** The last step needed: the tree left after stdin closed, after SIGTERM, or only after SIGKILL. */
  readonly step: "stdin" | "sigterm" | "sigkill";
  /** Pids still running after SIGKILL (empty when confirmed). */
  readonly survivors: readonly number[];
}

// SIGKILL cannot be refused, but the kernel needs a moment to tear a process down.
const KILL_CONFIRM_MS = 2_000;

/** Live process groups, each with its tree's mark (none on Windows). */
const liveGroups = new Map<number, TreeMark | undefined>();
let exitGuardInstalled = false;

/**
 * Remembers a started process group so that, should the host exit without disposing
 * the bridge, the group is killed on the way out instead of being orphaned (M4), and so
 * is every process carrying its tree's mark (a `setsid` daemon has left the group).
 * Installed lazily by the first spawn, never at import.
 */
export function guardGroup(pgid: number, mark?: TreeMark): void {
  liveGroups.set(pgid, mark);
  if (exitGuardInstalled) return;
  exitGuardInstalled = true;
  process.once("exit", () => {
    const kill = (pid: number) => {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    for (const group of liveGroups.keys()) {
      if (process.platform === "win32") spawnSync("taskkill", ["/T", "/F", "/PID", String(group)], { stdio: "ignore" });
      else kill(-group);
    }
    const marks = [...liveGroups.values()].filter((mark) => mark !== undefined);
    for (const pid of processesCarrying(marks)) kill(pid);
  });
}

/**
 * Ends a provider's whole process tree and verifies it (M4): close stdin and wait
 * `graceMs` for a polite exit, then SIGTERM the group (and any descendant that left it)
 * and wait `graceMs`, then SIGKILL and wait until the kernel has removed them. The
 * report says whether every process is confirmed gone; it never throws. `seen` are
 * members noted earlier (see `ChildProcessTransport.noteDescendants`); `mark` finds the
 * processes that carry the tree's environment mark, whatever became of their parents.
 */
export async function terminateTree(child: ChildProcess, graceMs: number, seen: readonly ProcessIdentity[] = [], mark?: TreeMark): Promise<TerminationReport> {
  const pgid = child.pid;
  if (pgid === undefined) return { confirmed: true, step: "stdin", survivors: [] };
  // Snapshot before anything exits: a grandchild reparented later is still ours, and so is
  // one seen earlier (`seen`, same pid and start time) that no link leads to any more.
  let known = liveTree(pgid, pgid, seen, mark);
  try {
    child.stdin?.end();
  } catch {
    // A broken pipe means the child is already gone.
  }
  if (process.platform === "win32") return terminateOnWindows(child, graceMs);

  if (await waitUntilGone(pgid, known, graceMs)) return done("stdin");
  known = merge(known, liveTree(pgid, pgid, known, mark));
  signalTree(pgid, known, "SIGTERM");
  if (await waitUntilGone(pgid, known, graceMs)) return done("sigterm");
  known = merge(known, liveTree(pgid, pgid, known, mark));
  signalTree(pgid, known, "SIGKILL");
  if (await waitUntilGone(pgid, known, Math.max(graceMs, KILL_CONFIRM_MS))) return done("sigkill");
  const survivors = liveTree(pgid, pgid, known, mark).map((identity) => identity.pid);
  return { confirmed: false, step: "sigkill", survivors };

  function done(step: TerminationReport["step"]): TerminationReport {
    liveGroups.delete(pgid as number);
    return { confirmed: true, step, survivors: [] };
  }
}

function merge(a: readonly ProcessIdentity[], b: readonly ProcessIdentity[]): ProcessIdentity[] {
  const byPid = new Map(a.map((identity) => [identity.pid, identity]));
  for (const identity of b) byPid.set(identity.pid, identity);
  return [...byPid.values()];
}

async function waitUntilGone(pgid: number, known: readonly ProcessIdentity[], budgetMs: number): Promise<boolean> {
  const deadline = performance.now() + budgetMs;
  let pause = 2;
  for (;;) {
    if (stillRunning(known).length === 0 && !groupRunning(pgid)) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, 50);
  }
}

async function terminateOnWindows(child: ChildProcess, graceMs: number): Promise<TerminationReport> {
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const waitExit = async (budgetMs: number) => {
    const deadline = performance.now() + budgetMs;
    while (!exited() && performance.now() < deadline) await sleep(20);
    return exited();
  };
  if (await waitExit(graceMs)) return { confirmed: true, step: "stdin", survivors: [] };
  spawnSync("taskkill", ["/T", "/F", "/PID", String(child.pid)], { stdio: "ignore" });
  if (await waitExit(Math.max(graceMs, KILL_CONFIRM_MS))) return { confirmed: true, step: "sigkill", survivors: [] };
  return { confirmed: false, step: "sigkill", survivors: child.pid === undefined ? [] : [child.pid] };
}
