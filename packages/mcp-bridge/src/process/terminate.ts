import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { reaperSource } from "./reaper.js";
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
 * Installed lazily by the first spawn, never at import. A host that dies without running
 * its exit hooks (SIGKILL, a signal it does not handle, a crash) is covered by the
 * reaper (see {@link startReaper}).
 */
export function guardGroup(pgid: number, mark?: TreeMark): void {
  liveGroups.set(pgid, mark);
  tellReaper(`+ ${pgid}${mark === undefined ? "" : ` ${mark.name}=${mark.value}`}`);
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
  const known = liveTree(pgid, pgid, seen, mark);
  try {
    child.stdin?.end();
  } catch {
    // A broken pipe means the child is already gone.
  }
  if (process.platform === "win32") return terminateOnWindows(child, graceMs);

  const tree: Tree = { pgid, known, mark, strayed: false };
  if (await waitUntilGone(tree, graceMs)) return done("stdin");
  tree.known = merge(tree.known, liveTree(pgid, pgid, tree.known, mark));
  signalTree(pgid, tree.known, "SIGTERM");
  if (await waitUntilGone(tree, graceMs, "SIGTERM")) return done("sigterm");
  tree.known = merge(tree.known, liveTree(pgid, pgid, tree.known, mark));
  signalTree(pgid, tree.known, "SIGKILL");
  if (await waitUntilGone(tree, Math.max(graceMs, KILL_CONFIRM_MS), "SIGKILL")) return done("sigkill");
  const survivors = liveTree(pgid, pgid, tree.known, mark).map((identity) => identity.pid);
  return { confirmed: false, step: "sigkill", survivors };

  function done(step: TerminationReport["step"]): TerminationReport {
    liveGroups.delete(pgid as number);
    tellReaper(`- ${pgid}`);
    return { confirmed: true, step, survivors: [] };
  }
}

function merge(a: readonly ProcessIdentity[], b: readonly ProcessIdentity[]): ProcessIdentity[] {
  const byPid = new Map(a.map((identity) => [identity.pid, identity]));
  for (const identity of b) byPid.set(identity.pid, identity);
  return [...byPid.values()];
}

/** What a termination has found of one tree so far. */
interface Tree {
  readonly pgid: number;
  known: readonly ProcessIdentity[];
  readonly mark: TreeMark | undefined;
  /** A scan for the mark found processes nothing knew of: the tree has moved under us. */
  strayed: boolean;
}

/**
 * Clean scans in a row needed once a tree has strayed. One scan of `/proc` is not a
 * snapshot: a generation that starts its successor and exits while the scan reads the
 * other processes is missed, and so is the successor, listed after it began. A chain
 * re-spawning every 0.2 s slipped through a single clean scan now and then.
 */
const CLEAN_SCANS_AFTER_STRAYS = 3;
const CLEAN_SCAN_PAUSE_MS = 20;

/**
 * Waits until every known member and the group are gone, then looks for the tree's mark
 * once more before saying so: a descendant that keeps re-spawning itself into a new
 * session (`setsid`) leaves the known members and the group while its next generation,
 * which nothing knew of, runs on. Marked processes found so are added to the tree and sent
 * `signal` (the step's; none while stdin closes), and the wait goes on until a scan finds
 * none; processes that keep appearing until the budget ends leave the tree unconfirmed.
 */
async function waitUntilGone(tree: Tree, budgetMs: number, signal?: NodeJS.Signals): Promise<boolean> {
  const deadline = performance.now() + budgetMs;
  let pause = 2;
  let clean = 0;
  for (;;) {
    if (stillRunning(tree.known).length === 0 && !groupRunning(tree.pgid)) {
      const strays = tree.mark === undefined ? [] : liveTree(tree.pgid, tree.pgid, [], tree.mark);
      if (strays.length === 0) {
        if (!tree.strayed || ++clean >= CLEAN_SCANS_AFTER_STRAYS) return true;
        pause = CLEAN_SCAN_PAUSE_MS;
      } else {
        clean = 0;
        tree.strayed = true;
        tree.known = merge(tree.known, strays);
        if (signal !== undefined) signalTree(tree.pgid, strays, signal);
        // A new generation found: look again soon, it may have started the next one.
        pause = 2;
      }
    } else clean = 0;
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

/**
 * The reaper (its program is {@link reaperSource}): a small process of its own, in its own
 * process group, told on a pipe which provider groups are live. When the pipe closes the
 * host has gone, however it went, and it ends every group still listed. Without it, a host
 * stopped by a signal it does not handle (or by SIGKILL) never runs its exit hooks, and the
 * providers, started detached, would run on. Started with the first provider; `null` once
 * it could not start or has gone (the exit hook still covers an orderly exit). Not on
 * Windows, which has no process groups.
 */
let reaper: ChildProcess | null | undefined;

function tellReaper(line: string): void {
  if (process.platform === "win32" || reaper === null) return;
  reaper ??= startReaper();
  if (reaper === null) return;
  try {
    reaper.stdin!.write(`${line}\n`);
  } catch {
    reaper = null;
  }
}

function startReaper(): ChildProcess | null {
  try {
    const child = spawn(process.execPath, ["-e", reaperSource()], { stdio: ["pipe", "ignore", "ignore"], detached: true, env: {} });
    child.on("error", () => (reaper = null));
    child.on("exit", () => (reaper = null));
    child.stdin!.on("error", () => (reaper = null));
    // It must not keep the host alive: the host's exit is what it waits for.
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    return child;
  } catch {
    return null;
  }
}
