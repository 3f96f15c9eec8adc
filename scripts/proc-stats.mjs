// What Linux's /proc says of this process and its children, for the packages' bench and
// soak scripts (`pnpm bench`, `pnpm soak`); empty or undefined elsewhere.
import { readdirSync, readFileSync } from "node:fs";

/** The fields of a `/proc/.../stat` file after the command name: [0] state, [1] parent pid, [11] user ticks, [12] system ticks. */
function statFields(file) {
  const stat = readFileSync(file, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU ticks (1/100 s) in a stat's fields: user plus system. */
export const ticksOf = (fields) => Number(fields[11]) + Number(fields[12]);

/** The stat fields of each of this process's threads, by thread id. */
export function threadStats() {
  const threads = new Map();
  try {
    for (const tid of readdirSync("/proc/self/task")) threads.set(tid, statFields(`/proc/self/task/${tid}/stat`));
  } catch {
    // Not Linux: no threads to tell.
  }
  return threads;
}

/** The stat fields and pid of each process whose parent is this one (MCP servers, the bridge's reaper). */
export function childStats() {
  const children = [];
  try {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const fields = statFields(`/proc/${pid}/stat`);
        if (Number(fields[1]) === process.pid) children.push(Object.assign(fields, { pid: Number(pid) }));
      } catch {
        // Gone while we looked.
      }
    }
  } catch {
    // Not Linux: no children to tell.
  }
  return children;
}

/** CPU time (µs, in 10 ms clock ticks) a process has used; undefined where /proc is not or the process is gone. */
export function processCpuMicros(pid) {
  try {
    return (ticksOf(statFields(`/proc/${pid}/stat`)) * 1e6) / 100;
  } catch {
    return undefined;
  }
}

/** How many descriptors this process holds open; NaN where /proc is not. */
export function openDescriptors() {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch {
    return Number.NaN;
  }
}

/**
 * Nanoseconds the main thread has spent on a CPU and waiting in the run queue for one
 * (`/proc/<pid>/task/<pid>/schedstat`); undefined where the kernel does not keep them.
 */
export function mainThreadSchedule() {
  try {
    const [running, waiting] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").trim().split(" ").map(Number);
    return Number.isFinite(running) && Number.isFinite(waiting) ? { running, waiting } : undefined;
  } catch {
    return undefined;
  }
}

/** KiB the whole machine has written to its disks so far (`pgpgout` in /proc/vmstat); undefined elsewhere. */
export function diskWrittenKiB() {
  try {
    const line = readFileSync("/proc/vmstat", "utf8")
      .split("\n")
      .find((entry) => entry.startsWith("pgpgout "));
    return line === undefined ? undefined : Number(line.slice("pgpgout ".length));
  } catch {
    return undefined;
  }
}
