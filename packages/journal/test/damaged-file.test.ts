import { spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { Journal, JOURNAL_ERRORS } from "../src/index.js";
import { refuseReadOnlyConnection } from "../src/store/schema.js";
import { completeCall, openSession, request, temporaryFolderPerTest } from "./helpers.js";

// Files the journal cannot use as they are: one this process may not write, and one
// whose pages or schema were damaged. Every error is the journal's own (an
// OpenWorkerError with a JOURNAL_* code, never SQLite's), and verify() reports a break.
// The damage is made deterministically on a real journal: a page of a chosen table
// (found with SQLite's dbstat) gets an invalid b-tree page type, or the schema's text
// loses a column name.

const folder = temporaryFolderPerTest();
let file: string;

// Three sessions of 40 calls each (two closed, one open), each call its own commit: many
// small frames, so several leaf pages of frames (a group holding many calls would make a
// few large frames, stored on overflow pages behind one leaf).
beforeEach(async () => {
  file = folder.file("journal.db");
  const journal = Journal.open({ path: file });
  for (const sessionId of ["s1", "s2", "s3"]) {
    openSession(journal, sessionId);
    for (let call = 0; call < 40; call++) {
      await completeCall(journal, sessionId, `c${call}`);
      await journal.flush();
    }
    if (sessionId !== "s3") journal.sessionClosed({ sessionId });
  }
  request(journal, "s3", "waiting");
  journal.close();
});

/** Each page of `table`, from SQLite's own map of the file, with its type. */
function pagesOf(table: string): { pageno: number; pagetype: string }[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare<[string], { pageno: number; pagetype: string }>("SELECT pageno, pagetype FROM dbstat WHERE name = ? ORDER BY pageno").all(table);
  } finally {
    db.close();
  }
}

/** Overwrites the b-tree page type byte of `pageno` with one SQLite never writes. */
function breakPage(pageno: number): void {
  const db = new Database(file, { readonly: true });
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  db.close();
  const bytes = readFileSync(file);
  bytes[(pageno - 1) * pageSize] = 0xff;
  writeFileSync(file, bytes);
}

function failureOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("a journal file this process may not write (A3)", () => {
  it("A3 a writer connection SQLite could open only read-only is refused: JOURNAL_OPEN_FAILED naming the file and the missing write permission", () => {
    // What SQLite does with a 0444 file (root ignores file modes, so the test asks for it).
    const db = new Database(file, { readonly: true });
    try {
      const error = failureOf(() => refuseReadOnlyConnection(db, file));
      expect(OpenWorkerError.hasCode(error, JOURNAL_ERRORS.OPEN_FAILED)).toBe(true);
      expect((error as Error).message).toContain(JSON.stringify(file));
      expect((error as Error).message).toContain("no write permission");
      expect(db.inTransaction).toBe(false);
    } finally {
      db.close();
    }
    // A connection that may write passes, and nothing was written by asking.
    const writable = new Database(file);
    try {
      const version = writable.pragma("user_version", { simple: true });
      refuseReadOnlyConnection(writable, file);
      expect(writable.pragma("user_version", { simple: true })).toBe(version);
      expect(writable.inTransaction).toBe(false);
    } finally {
      writable.close();
    }
  });

  it("A3 Journal.open as the writer on a 0444 file fails at open, before any record is accepted (run as an unprivileged user)", () => {
    chmodSync(folder.dir, 0o777);
    chmodSync(file, 0o444);
    const script = [
      `import { Journal } from ${JSON.stringify(path.resolve(import.meta.dirname, "../dist/index.js"))};`,
      `try { Journal.open({ path: ${JSON.stringify(file)} }); console.log("opened"); }`,
      `catch (error) { console.log(error.code + " " + error.message); }`,
    ].join("\n");
    // Root writes any file whatever its mode: the open runs as "nobody" when this is root.
    const root = process.getuid?.() === 0;
    const command = root
      ? ["setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "--input-type=module", "-e", script]]
      : [process.execPath, ["--input-type=module", "-e", script]];
    const child = spawnSync(command[0] as string, command[1] as string[], { encoding: "utf8" });
    if (root && child.error !== undefined) return; // no setpriv here: the test above covers the check
    expect(child.stdout).toMatch(/^JOURNAL_OPEN_FAILED .*no write permission/);
    expect(child.stdout).toContain(file);
  });
});

describe("a damaged journal file (A3)", () => {
  it("A3 a writer opening a file whose head rows SQLite finds malformed gets JOURNAL_DAMAGED, not SQLite's error, and no lock is left", () => {
    breakPage(pagesOf("live_sessions")[0]!.pageno);
    const error = failureOf(() => Journal.open({ path: file }));
    expect(OpenWorkerError.hasCode(error, JOURNAL_ERRORS.DAMAGED)).toBe(true);
    expect((error as Error).message).toContain(JSON.stringify(file));
    expect((error as Error).message).toContain("malformed");
    // The refused open let go of the lock: the same process gets the same answer, not JOURNAL_LOCKED.
    expect(
      OpenWorkerError.hasCode(
        failureOf(() => Journal.open({ path: file })),
        JOURNAL_ERRORS.DAMAGED,
      ),
    ).toBe(true);
  });

  it("A3 a schema that lost a column (its text altered) is JOURNAL_DAMAGED for a writer and a reader", () => {
    const bytes = readFileSync(file);
    const at = bytes.indexOf("final_calls");
    expect(at).toBeGreaterThan(0);
    bytes.write("final_callx", at);
    writeFileSync(file, bytes);
    for (const readonly of [false, true]) {
      const error = failureOf(() => Journal.open({ path: file, readonly }));
      expect(OpenWorkerError.hasCode(error, JOURNAL_ERRORS.DAMAGED)).toBe(true);
      expect((error as Error).message).toContain("no such column");
    }
  });

  it("A3 verify() on a file with a malformed frames page reports a break and never throws, for a writer and a reader", () => {
    const leaves = pagesOf("frames").filter((page) => page.pagetype === "leaf");
    expect(leaves.length).toBeGreaterThan(1);
    breakPage(leaves[0]!.pageno);
    for (const readonly of [false, true]) {
      const journal = Journal.open({ path: file, readonly });
      try {
        const report = journal.verify();
        expect(report).toMatchObject({ ok: false, firstBreak: { problem: expect.stringContaining("unreadable: database disk image is malformed") } });
      } finally {
        journal.close();
      }
    }
  });
});
