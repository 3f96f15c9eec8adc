import { readdirSync, readFileSync } from "node:fs";

/** A process seen in `/proc`: its pid plus its start time, so a reused pid is not mistaken for it. */
export interface ProcessIdentity {
  readonly pid: number;
  readonly startTime: string;
}

/**
 * The mark every process of one provider's tree carries from its start: an environment
 * entry (`OPENWORKER_PROVIDER_TREE=<random id>`) that children inherit, read back from
 * `/proc/<pid>/environ`. It finds a daemon that lost every parent link (`setsid`, then
 * its parents exited) whenever it was forked. `since` (start time, clock ticks after
 * boot) skips every process older than the provider without reading its environment.
 */
export interface TreeMark {
  readonly name: string;
  readonly value: string;
  readonly since: number;
}

/** The environment entry that marks a provider's tree (see {@link TreeMark}). */
export const TREE_MARK_VARIABLE = "OPENWORKER_PROVIDER_TREE";

interface ProcStat {
  readonly pid: number;
  readonly state: string;
  readonly ppid: number;
  readonly pgrp: number;
  readonly startTime: string;
}

const HAS_PROC = process.platform === "linux";

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses: parse after its last ")".
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(" ");
  const [state, ppid, pgrp] = fields;
  const startTime = fields[19];
  if (state === undefined || ppid === undefined || pgrp === undefined || startTime === undefined) return undefined;
  return { pid, state, ppid: Number(ppid), pgrp: Number(pgrp), startTime };
}

function allStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return stats;
  }
  for (const entry of entries) {
    const code = entry.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.push(stat);
  }
  return stats;
}

// A zombie has released everything but its table entry; it only waits for a parent that
// reaps it (which a container's pid 1 may never do), so it counts as gone. But /proc
// shows a process as a zombie as soon as its main thread is gone: when that thread
// called pthread_exit while others run on, the process runs too, and is not gone.
const isRunning = (stat: ProcStat) => (stat.state !== "Z" && stat.state !== "X") || (stat.state === "Z" && hasLiveThread(stat.pid));

function hasLiveThread(pid: number): boolean {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  for (const task of tasks) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${task}/stat`, "latin1");
    } catch {
      continue;
    }
    const state = text.charAt(text.lastIndexOf(")") + 2);
    if (state !== "Z" && state !== "X" && state !== "") return true;
  }
  return false;
}

/**
 * The live members of process group `pgid` plus the live descendants of `rootPid` that
 * left the group (`setsid` in a wrapper): the whole tree a provider owns.
 * Without `/proc` (macOS), only the group is known: one entry per live group is not
 * available, so it returns `[{ pid: -pgid }]` while the group exists.
 */
export function liveTree(pgid: number, rootPid: number, known: readonly ProcessIdentity[] = [], mark?: TreeMark): ProcessIdentity[] {
  if (!HAS_PROC) return groupExists(pgid) ? [{ pid: -pgid, startTime: "" }] : [];
  const stats = allStats();
  const byParent = new Map<number, ProcStat[]>();
  for (const stat of stats) {
    const siblings = byParent.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else byParent.set(stat.ppid, [stat]);
  }
  const found = new Map<number, ProcStat>();
  for (const stat of stats) if (stat.pgrp === pgid) found.set(stat.pid, stat);
  // Processes carrying the tree's mark that lost every link to it (forked after the last
  // note, every parent since gone): an orphan is adopted by init or by a subreaper among
  // the provider's ancestors, which are the host and its own ancestors. Only those, started
  // since the provider, have their environment read; their descendants are walked too.
  if (mark) for (const stat of carrying(stats.filter(adoptedBy(stats)), [mark])) found.set(stat.pid, stat);
  const queue = [rootPid, ...found.keys()];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const child of byParent.get(next) ?? []) {
      if (found.has(child.pid)) continue;
      found.set(child.pid, child);
      queue.push(child.pid);
    }
  }
  const root = stats.find((stat) => stat.pid === rootPid);
  if (root) found.set(rootPid, root);
  // Members seen earlier stay tracked even once reparented away from the tree.
  for (const identity of known) {
    if (found.has(identity.pid)) continue;
    const stat = readStat(identity.pid);
    if (stat && stat.startTime === identity.startTime) found.set(stat.pid, stat);
  }
  return [...found.values()].filter(isRunning).map(({ pid, startTime }) => ({ pid, startTime }));
}

/** The start time (clock ticks after boot) of `pid`, or undefined without `/proc`. */
export function startTimeOf(pid: number): number | undefined {
  if (!HAS_PROC) return undefined;
  const stat = readStat(pid);
  return stat === undefined ? undefined : Number(stat.startTime);
}

/**
 * The running processes that carry any of `marks` (see {@link TreeMark}), by pid: what
 * the host's exit hook ends when the host exits without closing its providers. Empty
 * without `/proc`.
 */
export function processesCarrying(marks: readonly TreeMark[]): number[] {
  if (!HAS_PROC || marks.length === 0) return [];
  return carrying(allStats(), marks)
    .filter(isRunning)
    .map((stat) => stat.pid);
}

/** Whether a process's parent is one an orphan of the provider's tree is given to: init, the host, or one of the host's ancestors (a subreaper). */
function adoptedBy(stats: readonly ProcStat[]): (stat: ProcStat) => boolean {
  const byPid = new Map(stats.map((stat) => [stat.pid, stat]));
  const adopters = new Set([1]);
  for (let pid: number | undefined = process.pid; pid !== undefined && pid > 1 && !adopters.has(pid); pid = byPid.get(pid)?.ppid) adopters.add(pid);
  return (stat) => adopters.has(stat.ppid);
}

function carrying(stats: readonly ProcStat[], marks: readonly TreeMark[]): ProcStat[] {
  const since = Math.min(...marks.map((mark) => mark.since));
  const needles = marks.map((mark) => `${mark.name}=${mark.value}\0`);
  return stats.filter((stat) => Number(stat.startTime) >= since && carriesMark(stat.pid, needles));
}

// `/proc/<pid>/environ` is the environment the process was started with; another user's
// process (or one that is not dumpable) cannot be read, and is not ours anyway.
function carriesMark(pid: number, needles: readonly string[]): boolean {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  return needles.some((needle) => environ.indexOf(needle) === 0 || environ.includes(`\0${needle}`));
}

/** Which of `identities` are still running (same pid and start time, not a zombie). */
export function stillRunning(identities: readonly ProcessIdentity[]): ProcessIdentity[] {
  if (!HAS_PROC) return identities.filter((identity) => (identity.pid < 0 ? groupExists(-identity.pid) : pidExists(identity.pid)));
  return identities.filter((identity) => {
    const stat = readStat(identity.pid);
    return stat !== undefined && stat.startTime === identity.startTime && isRunning(stat);
  });
}

/**
 * True while a process of group `pgid` runs. `kill(-pgid, 0)` answers cheaply when the
 * group is empty; only when it says otherwise is `/proc` read, since a group of zombies
 * (orphans whose new parent never reaps them) still answers `kill`.
 */
export function groupRunning(pgid: number): boolean {
  if (!groupExists(pgid)) return false;
  if (!HAS_PROC) return true;
  return allStats().some((stat) => stat.pgrp === pgid && isRunning(stat));
}

function groupExists(pgid: number): boolean {
  return pidExists(-pgid);
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Sends `signal` to the group and to every listed process; a process already gone is fine. */
export function signalTree(pgid: number, members: readonly ProcessIdentity[], signal: NodeJS.Signals): void {
  const send = (pid: number) => {
    try {
      process.kill(pid, signal);
    } catch {
      // ESRCH: already gone, which is the goal. EPERM surfaces as a survivor at verification.
    }
  };
  if (process.platform !== "win32") send(-pgid);
  for (const member of stillRunning(members)) if (member.pid > 0) send(member.pid);
}
