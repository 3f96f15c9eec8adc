import { accessSync, constants, existsSync, type Stats, statSync } from "node:fs";
import path from "node:path";
import type { OpenWorkerError } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS, journalError } from "./errors.js";

/**
 * Refuses a journal path that exists and is not a regular file (symbolic links are
 * followed). Checked before anything is created beside the path: SQLite "opens" a device
 * such as `/dev/null` or a FIFO and then makes its rollback journal `<path>-journal`
 * beside it (a stray `/dev/null-journal`), and a writer would add `<path>-lock` there.
 */
export function refuseNonRegularFile(file: string): void {
  let stats: Stats | undefined;
  try {
    stats = statSync(file, { throwIfNoEntry: false });
  } catch {
    // Unreadable metadata (a folder without search permission): SQLite's open says why.
    return;
  }
  if (stats === undefined || stats.isFile()) return;
  throw journalError(
    JOURNAL_ERRORS.NOT_A_FILE,
    `journal ${JSON.stringify(file)}: the path is ${kindOf(stats)}, not a journal file; give the path of a journal file (a writer creates it if it does not exist)`,
    { path: file, kind: kindOf(stats) },
  );
}

/** What a path that is not a regular file is, as messages say it: "a directory", "a named pipe (FIFO)". */
export function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isFIFO()) return "a named pipe (FIFO)";
  if (stats.isSocket()) return "a socket";
  return "not a regular file";
}

/**
 * The error for a reader that failed because it cannot write the journal's folder, or
 * `undefined` when that is not the reason. A journal is a SQLite database in WAL mode,
 * and SQLite reads one only through its shared-memory index `<file>-shm` and its log
 * `<file>-wal`: a reader must create whichever is missing, even though it writes no
 * record. When both exist (a writer is running, or left them), SQLite reads them without
 * writing, so a read-only folder is then not the problem.
 */
export function folderReadOnlyError(file: string, cause: unknown): OpenWorkerError | undefined {
  // SQLite says SQLITE_READONLY_DIRECTORY when it cannot create a missing -wal, and
  // SQLITE_CANTOPEN when it cannot create a missing -shm beside an existing -wal.
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string" || !/^SQLITE_(READONLY|CANTOPEN)/.test(code) || !existsSync(file)) return undefined;
  const folder = path.dirname(path.resolve(file));
  if (isWritable(folder)) return undefined;
  const wal = `${file}-wal`;
  const hasWal = existsSync(wal);
  const missing = [`${file}-shm`, wal].filter((companion) => !existsSync(companion)).map((companion) => path.basename(companion));
  if (missing.length === 0) return undefined;
  const name = JSON.stringify(path.basename(file));
  const copy = hasWal
    ? `copy ${name} together with ${JSON.stringify(path.basename(wal))} (it may hold committed records) to a writable folder and read the copy`
    : `copy ${name} to a writable folder and read the copy`;
  return journalError(
    JOURNAL_ERRORS.FOLDER_READ_ONLY,
    `journal ${JSON.stringify(file)}: cannot be read because its folder ${JSON.stringify(folder)} is not writable by this user: the journal is a SQLite database in WAL mode, and SQLite must create ${missing.map((name) => JSON.stringify(name)).join(" and ")} beside it even to read it. Make the folder writable, or ${copy}`,
    { path: file, folder, missing },
    cause,
  );
}

function isWritable(folder: string): boolean {
  try {
    accessSync(folder, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
