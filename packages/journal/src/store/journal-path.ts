import { accessSync, constants, existsSync, realpathSync, type Stats, statSync } from "node:fs";
import path from "node:path";
import type { OpenWorkerError } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS, journalError } from "../errors.js";

/** Refuses a journal path that exists and is not a regular file (symbolic links are followed), and any path on a kernel pseudo file system. */
export function refuseNonRegularFile(file: string): void {
  let stats: Stats | undefined;
  try {
    stats = statSync(file, { throwIfNoEntry: false });
  } catch {
    // Unreadable metadata (a folder without search permission): SQLite's open says why.
    refusePseudoFileSystem(file);
    return;
  }
  if (stats === undefined || stats.isFile()) {
    refusePseudoFileSystem(file);
    return;
  }
  throw journalError(
    JOURNAL_ERRORS.NOT_A_FILE,
    `journal ${JSON.stringify(file)}: the path is ${kindOf(stats)}, not a journal file; give the path of a journal file (a writer creates it if it does not exist)`,
    { path: file, kind: kindOf(stats) },
  );
}
/** Kernel pseudo file systems: no journal belongs there, and `mkdirSync(…, { recursive: true })` under `/proc` never returns. */
const PSEUDO_FILE_SYSTEMS = ["/proc", "/sys", "/dev"] as const;

/** Refuses a journal path on a kernel pseudo file system (`/proc`, `/sys`, `/dev`), also through a symbolic link, before any folder is created for it. */
function refusePseudoFileSystem(file: string): void {
  if (process.platform !== "linux") return;
  const resolved = realPathOfExistingPart(path.resolve(file));
  const root = PSEUDO_FILE_SYSTEMS.find((folder) => resolved === folder || resolved.startsWith(`${folder}/`));
  if (root === undefined) return;
  const shown = resolved === path.resolve(file) ? "" : ` (it leads to ${JSON.stringify(resolved)})`;
  throw journalError(
    JOURNAL_ERRORS.NOT_A_FILE,
    `journal ${JSON.stringify(file)}${shown}: the path is under ${root}, a pseudo file system of the kernel, not a place for a journal file; give a path on a disk, such as ~/.openworker/journal.db`,
    { path: file, kind: `under ${root}` },
  );
}
/** `absolute` with its longest existing leading part replaced by its real path (symbolic links followed). */
function realPathOfExistingPart(absolute: string): string {
  let existing = absolute;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync.native(existing), ...rest);
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return absolute;
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
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
/** The error for a reader that failed because it cannot write the journal's folder, or `undefined` when that is not the reason. */
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
