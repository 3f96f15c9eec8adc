import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, linkSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import path from "node:path";
import { JOURNAL_ERRORS, journalError } from "../errors.js";

/** The one-writer rule, enforced: a writer holds `<journal>-lock`, a file holding its pid, created exclusively at open and removed at close. */
export class WriterLock {
  private released = false;

  private constructor(readonly file: string) {}

  static acquire(journalFile: string): WriterLock {
    const file = `${journalFile}-lock`;
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
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
        if ((cause as NodeJS.ErrnoException).code !== "EEXIST")
          throw journalError(
            JOURNAL_ERRORS.OPEN_FAILED,
            `journal ${JSON.stringify(journalFile)}: cannot create its folder or its writer lock ${JSON.stringify(file)} (${cause instanceof Error ? cause.message : String(cause)}); check the folder's permissions`,
            { path: journalFile },
            cause,
          );
      }
      const holder = holderOf(file);
      if (holder === undefined && isFresh(file))
        throw journalError(
          JOURNAL_ERRORS.LOCKED,
          `journal ${JSON.stringify(journalFile)}: another writer is opening it right now (its lock ${JSON.stringify(file)} is new); one writer at a time`,
          { path: journalFile, lockFile: file },
        );
      if (holder !== undefined && isRunning(holder)) {
        const who = holder === process.pid ? "this process (another Journal instance not closed yet)" : `process ${holder}`;
        throw journalError(
          JOURNAL_ERRORS.LOCKED,
          `journal ${JSON.stringify(journalFile)} is being written by ${who}: one writer at a time. Close or stop it, or open with readonly: true to read beside it; if no such process runs, delete ${JSON.stringify(file)}`,
          { path: journalFile, lockFile: file, pid: holder },
        );
      }
      // Left by a writer that no longer runs: take it over. Only the starter holding the
      // takeover mutex removes a lock, and only one it has just seen to be stale: renaming
      // or removing by name without it could move a lock another starter made meanwhile
      // (two writers then both held "the" lock: 15 rounds in 30, six starters at once).
      if (!takeOver(file, holder)) pause(TAKEOVER_PAUSE_MS);
    }
    throw journalError(
      JOURNAL_ERRORS.LOCKED,
      `journal ${JSON.stringify(journalFile)}: its writer lock ${JSON.stringify(file)} is being taken over, or kept reappearing: another writer is starting; one writer at a time`,
      { path: journalFile, lockFile: file },
    );
  }
  release(): void {
    if (this.released) return;
    this.released = true;
    rmSync(this.file, { force: true });
  }
}

const ATTEMPTS = 24;
const TAKEOVER_PAUSE_MS = 5;
const STALE_AFTER_MS = 2000;
const MUTEX_HELD_AT_MOST_MS = 10_000;

/** Removes `file` if it is still the lock of `holder` (a dead writer, or `undefined`: an empty lock over two seconds old), holding the takeover mutex. */
function takeOver(file: string, holder: number | undefined): boolean {
  const mutex = `${file}.takeover`;
  let fd: number;
  try {
    fd = openSync(mutex, "wx");
  } catch {
    clearStaleMutex(mutex);
    return false;
  }
  try {
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    // The lock exists, so nobody can create another under its name, and under the mutex
    // nobody else removes it: if it is still the dead writer's, removing it is safe. No
    // lock at all: nothing to remove (a starter may be creating one right now).
    const lock = readLock(file);
    const stale = lock !== undefined && lock.pid === holder && (holder === undefined ? lock.ageMs >= STALE_AFTER_MS : !isRunning(holder));
    if (stale) rmSync(file, { force: true });
  } finally {
    rmSync(mutex, { force: true });
  }
  return true;
}
/** Removes a takeover mutex whose holder crashed holding it: its pid (written at once) no longer runs, or it has no pid and is over two seconds old. */
function clearStaleMutex(mutex: string): void {
  const seen = readLock(mutex);
  if (seen === undefined || !isStale(seen)) return;
  const moved = `${mutex}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    renameSync(mutex, moved);
  } catch {
    return; // another starter cleared it first
  }
  const got = readLock(moved);
  if (got === undefined || got.pid !== seen.pid || !isStale(got)) {
    try {
      linkSync(moved, mutex);
    } catch {
      // The name is taken again: that starter's mutex stands.
    }
  }
  rmSync(moved, { force: true });
}
/**
 * A takeover mutex whose holder is gone: its pid does not run, it has none and is over two seconds old, or it is over ten seconds old whoever holds it (a holder keeps
 * it for microseconds; a dead holder's pid since reused by another process must not lock the journal out for ever).
 */
function isStale(mutex: { pid: number | undefined; ageMs: number }): boolean {
  if (mutex.pid === undefined) return mutex.ageMs >= STALE_AFTER_MS;
  return !isRunning(mutex.pid) || mutex.ageMs >= MUTEX_HELD_AT_MOST_MS;
}
/** Waits `ms` without returning to the event loop (opening a journal is synchronous). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function holderOf(file: string): number | undefined {
  return readLock(file)?.pid;
}
/** The lock's pid (undefined: none written yet) and age, read from one open file; undefined when there is no lock. */
function readLock(file: string): { pid: number | undefined; ageMs: number } | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return undefined;
  }
  try {
    const ageMs = Date.now() - fstatSync(fd).mtimeMs;
    const buffer = Buffer.alloc(32);
    const pid = Number.parseInt(buffer.toString("utf8", 0, readSync(fd, buffer, 0, buffer.length, 0)), 10);
    return { pid: Number.isSafeInteger(pid) && pid > 0 ? pid : undefined, ageMs };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
/** A lock file without a pid yet, made in the last two seconds: its writer is still writing it. */
function isFresh(file: string): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs < STALE_AFTER_MS;
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
