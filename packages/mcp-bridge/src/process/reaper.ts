/**
 * The reaper's program. {@link reaperSource} hands its text to `node -e`, so a bundled
 * host ships no file beside its bundle; being a function here, it is linted and
 * type-checked like the rest of the bridge. It must stay self-contained: it runs in its
 * own process and sees nothing of this module (only `process` and the built-in modules
 * it loads itself).
 *
 * It reads, on stdin, which provider groups are live (`+ <pgid> [<mark>]`, `- <pgid>`).
 * When stdin closes, the host has gone, however it went: it sends SIGTERM to each group
 * still listed, SIGKILL a second later, then SIGKILL to every process whose environment
 * carries a listed mark (a `setsid` descendant that left its group), and exits. With
 * nothing listed it exits at once. It ignores SIGINT, SIGTERM and SIGHUP, so a Ctrl-C to
 * the host's group does not take it too.
 */
export function reaperProgram(): void {
  const fs = process.getBuiltinModule("node:fs");
  const groups = new Map<number, string | undefined>();
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => {});
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    text += chunk;
    for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n")) {
      const [op, pgid, mark] = text.slice(0, end).split(" ");
      text = text.slice(end + 1);
      if (op === "+") groups.set(Number(pgid), mark);
      else groups.delete(Number(pgid));
    }
  });
  const kill = (pid: number, signal: NodeJS.Signals): void => {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone, or not ours to signal.
    }
  };
  const killMarked = (): void => {
    const needles = [...groups.values()].filter((mark) => mark !== undefined && mark !== "").map((mark) => `\0${mark}\0`);
    if (needles.length === 0) return;
    let pids: string[] = [];
    try {
      pids = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name));
    } catch {
      return;
    }
    for (const pid of pids) {
      try {
        const environ = `\0${fs.readFileSync(`/proc/${pid}/environ`, "latin1")}`;
        if (needles.some((needle) => environ.includes(needle))) kill(Number(pid), "SIGKILL");
      } catch {
        // The process ended, or its environment is not readable.
      }
    }
  };
  let reaping = false;
  const reap = (): void => {
    if (reaping) return;
    reaping = true;
    if (groups.size === 0) process.exit(0);
    for (const pgid of groups.keys()) kill(-pgid, "SIGTERM");
    setTimeout(() => {
      for (const pgid of groups.keys()) kill(-pgid, "SIGKILL");
      killMarked();
      setTimeout(() => {
        killMarked();
        process.exit(0);
      }, 200);
    }, 1000);
  };
  process.stdin.on("end", reap);
  process.stdin.on("close", reap);
  process.stdin.on("error", reap);
}

/**
 * The `node -e` text that runs {@link reaperProgram}. A build that keeps function names
 * may wrap nested functions in a `__name` helper defined outside the function: the text
 * defines a no-op one so the program stands alone either way.
 */
export function reaperSource(): string {
  return `const __name = (target) => target;\n(${reaperProgram.toString()})();\n`;
}
