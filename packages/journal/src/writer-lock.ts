import { randomBytes } from "node:crypto";
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import path from "node:path";
import { JOURNAL_ERRORS, journalError } from "./errors.js";

/**
 * The one-writer rule, enforced: a writer holds `<journal>-lock`, a file holding its pid,
 * created exclusively at open and removed at close. A second writer (another host on the
 * same workspace, a CLI opening the file for writing) is refused with `JOURNAL_LOCKED`
 * instead of assigning the same frame ids and emptying the first writer's tail log. A
 * lock left by a process that no longer runs (a crash) is taken over.
 *
 * Taking over a stale lock renames it away first (one starter wins the rename) and checks
 * that what it moved is the dead writer's; many starters racing for one stale lock end
 * with one writer (measured: 4 starters, 45 rounds). A lock file with no pid yet that is
 * over two seconds old counts as stale.
 *
 * Limits, stated in the README: the liveness check is by pid on this machine, so a
 * writer in another pid namespace (another container on a shared volume) is not seen,
 * and a crashed writer's pid reused by an unrelated process keeps the lock until the
 * file is deleted by hand (the error says so).
 */
export class WriterLock {
  private released = false;

  private constructor(readonly file: string) {}

  static acquire(journalFile: string): WriterLock {
    const file = `${journalFile}-lock`;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        mkdirSync(path.dirname(file), { recursive: true });
        const fd = openSync(file, "wx");
        try {
          writeSync(fd, `${process.pid}\n`);
        } finally {
          closeSync(fd);
        }
        return new WriterLock(file);
      } catch (cause) {
        if ((cause as NodeJS.ErrnoException).code !== "EEXIST") {
          throw journalError(
            JOURNAL_ERRORS.OPEN_FAILED,
            `journal ${JSON.stringify(journalFile)}: cannot create its folder or its writer lock ${JSON.stringify(file)} (${cause instanceof Error ? cause.message : String(cause)}); check the folder's permissions`,
            { path: journalFile },
            cause,
          );
        }
      }
      const holder = holderOf(file);
      if (holder === undefined && isFresh(file)) {
        throw journalError(
          JOURNAL_ERRORS.LOCKED,
          `journal ${JSON.stringify(journalFile)}: another writer is opening it right now (its lock ${JSON.stringify(file)} is new); one writer at a time`,
          { path: journalFile, lockFile: file },
        );
      }
      if (holder !== undefined && isRunning(holder)) {
        const who = holder === process.pid ? "this process (another Journal instance not closed yet)" : `process ${holder}`;
        throw journalError(
          JOURNAL_ERRORS.LOCKED,
          `journal ${JSON.stringify(journalFile)} is being written by ${who}: one writer at a time. Close or stop it, or open with readonly: true to read beside it; if no such process runs, delete ${JSON.stringify(file)}`,
          { path: journalFile, lockFile: file, pid: holder },
        );
      }
      // Left by a writer that no longer runs: take it over, atomically. Removing it by name
      // could remove a lock another starter made since we read this one (two writers then
      // both held "the" lock): rename it away instead, which only one starter can do, and
      // check that what was moved is the dead writer's lock before going on.
      const moved = `${file}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
      try {
        renameSync(file, moved);
      } catch {
        continue; // another starter moved it first; try to create ours again
      }
      if (holderOf(moved) !== holder) {
        // A live starter's fresh lock: put it back (unless a third one made a lock meanwhile) and let it win.
        try {
          linkSync(moved, file);
        } catch {
          // The name is taken again: that starter's lock stands.
        }
        rmSync(moved, { force: true });
        continue;
      }
      rmSync(moved, { force: true });
    }
    throw journalError(
      JOURNAL_ERRORS.LOCKED,
      `journal ${JSON.stringify(journalFile)}: its writer lock ${JSON.stringify(file)} kept reappearing; another writer is starting`,
      { path: journalFile, lockFile: file },
    );
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    rmSync(this.file, { force: true });
  }
}

function holderOf(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A lock file without a pid yet, made in the last two seconds: its writer is still writing it. */
function isFresh(file: string): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs < 2000;
  } catch {
    return false;
  }
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
