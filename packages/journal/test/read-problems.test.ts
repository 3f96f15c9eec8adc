import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Journal, JOURNAL_ERRORS } from "../src/index.js";
import { unsupportedNode } from "../src/store/schema.js";
import { codeOf, completeCall, openSession } from "./helpers.js";

// What a reader (the CLI's `journal sessions|show|verify|export`) meets on odd paths:
// a folder it cannot write, a path that is not a file, an empty file.

const readerChild = path.resolve(import.meta.dirname, "fixtures/reader-child.mjs");

// Permissions do not bite root: as root, the child reader runs as `nobody` (setpriv).
const runsAsRoot = process.getuid?.() === 0;
const canDropToNobody = runsAsRoot && spawnSync("setpriv", ["--version"]).status === 0;

let dir: string;
const readOnlyFolders: string[] = [];

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "ow-journal-read-"));
  // `nobody` must reach the files under test.
  chmodSync(dir, 0o755);
});

afterEach(() => {
  for (const folder of readOnlyFolders.splice(0)) chmodSync(folder, 0o755);
  rmSync(dir, { recursive: true, force: true });
});

interface ChildOutput {
  code?: string;
  message?: string;
  details?: { folder?: string; missing?: string[] };
  verify?: { ok: boolean; records: number };
  sessions?: [string, number][];
}

/** Opens the journal read-only in a process that cannot write `file`'s folder. */
function readAsOtherUser(file: string): ChildOutput {
  const command = runsAsRoot ? "setpriv" : process.execPath;
  const args = runsAsRoot ? ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, readerChild, file] : [readerChild, file];
  const child = spawnSync(command, args, { encoding: "utf8" });
  if (child.status !== 0) throw new Error(`reader child failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as ChildOutput;
}

/** Copies the named files of `from` into a new folder `name`, then makes the folder and its files read-only. */
function readOnlyCopy(name: string, from: string, files: readonly string[]): string {
  const folder = path.join(dir, name);
  mkdirSync(folder);
  for (const file of files) {
    copyFileSync(path.join(from, file), path.join(folder, file));
    chmodSync(path.join(folder, file), 0o444);
  }
  chmodSync(folder, 0o555);
  readOnlyFolders.push(folder);
  return path.join(folder, "journal.db");
}

/** A closed journal with one session of 1 + 2 × 4 records: `journal.db` alone in `folder`. */
async function closedJournal(): Promise<string> {
  const folder = path.join(dir, "written");
  const journal = Journal.open({ path: path.join(folder, "journal.db") });
  openSession(journal, "s1");
  await completeCall(journal, "s1", "c1");
  await completeCall(journal, "s1", "c2");
  journal.close();
  return folder;
}

/**
 * A journal whose writer still runs: its records are committed to `journal.db-wal`, not yet
 * checkpointed into `journal.db`. `snapshot` copies files out while the writer is open.
 */
async function whileWriting(snapshot: (folder: string) => void): Promise<void> {
  const folder = path.join(dir, "running");
  const journal = Journal.open({ path: path.join(folder, "journal.db") });
  try {
    openSession(journal, "s1");
    await completeCall(journal, "s1", "c1");
    await completeCall(journal, "s1", "c2");
    await journal.flush();
    snapshot(folder);
  } finally {
    journal.close();
  }
}

describe.skipIf(runsAsRoot && !canDropToNobody)("a reader that cannot write the journal's folder", () => {
  it("A3 is told the folder is read-only, which folder, and what to do (JOURNAL_FOLDER_READ_ONLY)", async () => {
    const file = readOnlyCopy("archive", await closedJournal(), ["journal.db"]);
    const output = readAsOtherUser(file);
    expect(output.code).toBe(JOURNAL_ERRORS.FOLDER_READ_ONLY);
    expect(output.details).toMatchObject({ folder: path.dirname(file), missing: ["journal.db-shm", "journal.db-wal"] });
    expect(output.message).toContain(`its folder ${JSON.stringify(path.dirname(file))} is not writable`);
    expect(output.message).toContain('"journal.db-shm"');
    expect(output.message).toMatch(/Make the folder writable, or copy "journal.db" to a writable folder/);
    expect(output.message).not.toContain("not a readable journal database");
    // Nothing was left beside the file.
    expect(readdirSync(path.dirname(file))).toEqual(["journal.db"]);
  });

  it("A3 with a -wal file beside it, is told to copy the -wal too, and that copy holds every committed record", async () => {
    let running = "";
    await whileWriting((folder) => {
      running = path.join(dir, "snapshot");
      mkdirSync(running);
      for (const name of ["journal.db", "journal.db-wal"]) copyFileSync(path.join(folder, name), path.join(running, name));
    });
    const file = readOnlyCopy("archive", running, ["journal.db", "journal.db-wal"]);
    const output = readAsOtherUser(file);
    expect(output.code).toBe(JOURNAL_ERRORS.FOLDER_READ_ONLY);
    expect(output.details?.missing).toEqual(["journal.db-shm"]);
    expect(output.message).toContain('copy "journal.db" together with "journal.db-wal"');
    // Following the advice: both files, in a folder the reader may write.
    const copy = path.join(dir, "copy");
    mkdirSync(copy, { mode: 0o777 });
    chmodSync(copy, 0o777);
    for (const name of ["journal.db", "journal.db-wal"]) copyFileSync(path.join(path.dirname(file), name), path.join(copy, name));
    expect(readAsOtherUser(path.join(copy, "journal.db"))).toEqual({ verify: { ok: true, sessions: 1, records: 9 }, sessions: [["s1", 9]] });
  });

  it("A3 reads a read-only folder that already holds -shm and -wal (SQLite then needs to create nothing)", async () => {
    let file = "";
    await whileWriting((folder) => {
      file = readOnlyCopy("archive", folder, ["journal.db", "journal.db-wal", "journal.db-shm"]);
    });
    expect(readAsOtherUser(file)).toEqual({ verify: { ok: true, sessions: 1, records: 9 }, sessions: [["s1", 9]] });
  });

  it("an empty file in a read-only folder is reported as empty, not as a folder problem", () => {
    const source = path.join(dir, "source");
    mkdirSync(source);
    writeFileSync(path.join(source, "journal.db"), "");
    const output = readAsOtherUser(readOnlyCopy("archive", source, ["journal.db"]));
    expect(output.code).toBe(JOURNAL_ERRORS.EMPTY);
  });
});

describe("paths that are not journal files", () => {
  it("refuses a directory, for a writer and a reader, and creates nothing beside it (JOURNAL_NOT_A_FILE)", async () => {
    const folder = path.join(dir, "journal.db");
    mkdirSync(folder);
    for (const readonly of [false, true]) {
      const error = await errorOf(() => Journal.open({ path: folder, readonly }));
      expect(error.code).toBe(JOURNAL_ERRORS.NOT_A_FILE);
      expect(error.message).toContain(`journal ${JSON.stringify(folder)}: the path is a directory`);
    }
    expect(readdirSync(dir)).toEqual(["journal.db"]);
  });

  it("A3 a <path>-tail that is a directory: the writer is refused with JOURNAL_OPEN_FAILED naming it and what to do, and opens once it is moved", async () => {
    const file = path.join(dir, "journal.db");
    Journal.open({ path: file }).close();
    mkdirSync(`${file}-tail`);
    const error = await errorOf(() => Journal.open({ path: file }));
    expect(error.code).toBe(JOURNAL_ERRORS.OPEN_FAILED);
    expect(error.message).toContain(`journal tail log ${JSON.stringify(`${file}-tail`)} is a directory, not a file`);
    expect(error.message).toContain("move it out of the way, then open the journal again");
    // The refused open released the writer lock: once the directory is gone, a writer opens.
    expect(existsSync(`${file}-lock`)).toBe(false);
    rmSync(`${file}-tail`, { recursive: true });
    const journal = Journal.open({ path: file });
    openSession(journal, "s1");
    journal.close();
  });

  it.skipIf(!existsSync("/dev/null"))("refuses /dev/null, for a writer and a reader, and leaves no /dev/null-journal or -lock", async () => {
    const strays = ["/dev/null-journal", "/dev/null-lock", "/dev/null-wal", "/dev/null-shm", "/dev/null-tail"];
    const before = strays.filter((stray) => existsSync(stray));
    for (const readonly of [false, true]) {
      const error = await errorOf(() => Journal.open({ path: "/dev/null", readonly }));
      expect(error.code).toBe(JOURNAL_ERRORS.NOT_A_FILE);
      expect(error.message).toContain('journal "/dev/null": the path is a character device');
    }
    expect(strays.filter((stray) => existsSync(stray))).toEqual(before);
  });
});

describe("an empty file", () => {
  it("is reported to a reader as an empty file, not a journal yet (JOURNAL_EMPTY), not as needing a migration", async () => {
    const file = path.join(dir, "journal.db");
    writeFileSync(file, "");
    const error = await errorOf(() => Journal.open({ path: file, readonly: true }));
    expect(error.code).toBe(JOURNAL_ERRORS.EMPTY);
    expect(error.message).toContain("the file is empty (0 bytes)");
    expect(error.message).toContain("not a journal yet");
    expect(error.message).not.toContain("migrat");
  });

  it("a SQLite database without tables is reported to a reader as empty too", async () => {
    const file = path.join(dir, "journal.db");
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.close();
    const error = await errorOf(() => Journal.open({ path: file, readonly: true }));
    expect(error.code).toBe(JOURNAL_ERRORS.EMPTY);
    expect(error.message).toContain("a SQLite database without tables");
  });

  it("A3 is made a journal by a writer, as a new journal starts", async () => {
    const file = path.join(dir, "journal.db");
    writeFileSync(file, "");
    const writer = Journal.open({ path: file });
    openSession(writer, "s1");
    await completeCall(writer, "s1", "c1");
    writer.close();
    const reader = Journal.open({ path: file, readonly: true });
    try {
      expect(reader.verify()).toEqual({ ok: true, sessions: 1, records: 5 });
    } finally {
      reader.close();
    }
  });

  it("an unmigrated (schema v1) file is still a migration matter for a reader", async () => {
    const file = path.join(dir, "journal.db");
    copyFileSync(path.resolve(import.meta.dirname, "fixtures/journal-v1.db"), file);
    expect(await codeOf(() => Journal.open({ path: file, readonly: true }))).toBe(JOURNAL_ERRORS.NEEDS_MIGRATION);
  });
});

async function errorOf(run: () => unknown): Promise<{ code?: string; message: string }> {
  try {
    await run();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error("expected an error");
}

describe("SQLite's native part that cannot load", () => {
  const child = path.resolve(import.meta.dirname, "fixtures/no-binding-child.mjs");
  it.each([
    [
      "missing",
      "none for this platform",
      /native binding is not there for \w+-\w+ \(it ships prebuilt bindings .*\): reinstall it, or build it from source .*`npm run build-release`/,
    ],
    [
      "mismatch",
      "built for another Node.js",
      /native binding does not load in Node\.js v\d+\.\d+\.\d+ \(The module '.*' was compiled against .* NODE_MODULE_VERSION 115\.\); reinstall it, or build it from source .*`npm run build-release`/,
    ],
  ] as const)("A3 a native binding %s (%s) fails JOURNAL_OPEN_FAILED saying what to rebuild, not to check the journal's path", (how, _words, expected) => {
    const run = spawnSync(process.execPath, [child, how, path.join(dir, "journal.db")], { encoding: "utf8" });
    const answer = JSON.parse(run.stdout.trim()) as { code: string; message: string; details: { reason?: string } };
    expect(answer.code).toBe("JOURNAL_OPEN_FAILED");
    expect(answer.message).toMatch(expected);
    expect(answer.message).not.toContain("check the path");
    expect(answer.details.reason).toBe("native-binding");
  });

  it("A3 on a Node.js older than 22.12 the journal refuses to open (JOURNAL_OPEN_FAILED naming the versions) before its binding can end the process", () => {
    const run = spawnSync(process.execPath, [child, "old-node", path.join(dir, "journal.db")], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout.trim()) as { code: string; message: string; details: { reason?: string } };
    expect(answer.code).toBe("JOURNAL_OPEN_FAILED");
    expect(answer.message).toMatch(/needs Node\.js 22\.12 or later and this is Node\.js v20\.20\.2: run the host on Node\.js 22 or 24$/);
    expect(answer.details.reason).toBe("node-version");
    expect(existsSync(path.join(dir, "journal.db"))).toBe(false);
  });

  it("A3 unsupportedNode accepts 22.12 and later and refuses what comes before", () => {
    for (const version of ["22.12.0", "22.23.3", "23.0.0", "24.21.0", "26.1.0"]) expect(unsupportedNode(version), version).toBeUndefined();
    for (const version of ["20.20.2", "22.11.0", "18.0.0"]) expect(unsupportedNode(version), version).toMatch(/needs Node\.js 22\.12 or later/);
  });
});
