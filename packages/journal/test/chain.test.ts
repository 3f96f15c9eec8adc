import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Journal } from "../src/index.js";
import { completeCall, openSession, temporaryFolder } from "./helpers.js";

let folder: ReturnType<typeof temporaryFolder>;
let file: string;

// Two sessions: "s1" (closed, 10 records) and "s2" (open, 5 records).
beforeEach(async () => {
  folder = temporaryFolder();
  file = folder.file("journal.db");
  const journal = Journal.open({ path: file });
  openSession(journal, "s1");
  openSession(journal, "s2");
  await completeCall(journal, "s1", "a");
  await completeCall(journal, "s2", "b");
  await completeCall(journal, "s1", "c");
  journal.sessionClosed({ sessionId: "s1" });
  journal.close();
});

afterEach(() => folder.remove());

/** Changes the file behind the journal's back, as an attacker or a faulty disk would. */
function tamper(sql: string, ...params: unknown[]): void {
  const db = new Database(file);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

function verify(sessionId?: string) {
  const journal = Journal.open({ path: file, readonly: true });
  try {
    return journal.verify(sessionId);
  } finally {
    journal.close();
  }
}

const S1 = "(SELECT ref FROM sessions WHERE session_id = 's1')";

describe("record chain (A3)", () => {
  it("A3 an untouched journal verifies, whole and per session", () => {
    expect(verify()).toEqual({ ok: true, sessions: 2, records: 15 });
    expect(verify("s2")).toEqual({ ok: true, sessions: 1, records: 5 });
  });

  it("A3 an altered record is the first break, at its seq", () => {
    tamper(`UPDATE records SET data = replace(data, '"ok":true', '"ok":false') WHERE session_ref = ${S1} AND seq = 5`);
    expect(verify()).toMatchObject({ ok: false, firstBreak: { sessionId: "s1", seq: 5, problem: expect.stringContaining("altered record") } });
    expect(verify("s2").ok).toBe(true);
  });

  it("A3 a record rewritten with a fresh hash breaks the link of the next one", () => {
    const db = new Database(file);
    const row = db.prepare(`SELECT data, prev_hash FROM records WHERE session_ref = ${S1} AND seq = 3`).get() as { data: string; prev_hash: string };
    db.close();
    const data = row.data.replace('"by":"person"', '"by":"policy"');
    const hash = createHash("sha256").update(row.prev_hash + data).digest("hex");
    tamper(`UPDATE records SET data = ?, hash = ? WHERE session_ref = ${S1} AND seq = 3`, data, hash);
    expect(verify().firstBreak).toMatchObject({ sessionId: "s1", seq: 4, problem: expect.stringContaining("broken link") });
  });

  it("A3 a deleted record is reported as the missing link", () => {
    tamper(`DELETE FROM records WHERE session_ref = ${S1} AND seq = 6`);
    expect(verify().firstBreak).toMatchObject({ sessionId: "s1", seq: 6, problem: expect.stringContaining("missing record") });
  });

  it("A3 a cut-off tail of a closed session is a missing link", () => {
    tamper(`DELETE FROM records WHERE session_ref = ${S1} AND seq >= 9`);
    expect(verify().firstBreak).toMatchObject({ sessionId: "s1", seq: 9, problem: expect.stringContaining("closed at seq 10") });
  });

  it("A3 indexed columns that disagree with the hashed content are a break", () => {
    tamper(`UPDATE records SET kind = 'call_progress' WHERE session_ref = ${S1} AND seq = 4`);
    expect(verify().firstBreak).toMatchObject({ seq: 4, problem: expect.stringContaining("indexed columns") });
  });

  it("A2 a session row whose execution identity was swapped is a break at seq 1", () => {
    tamper("UPDATE sessions SET execution_identity = 'owid3:forged' WHERE session_id = 's2'");
    expect(verify().firstBreak).toMatchObject({ sessionId: "s2", seq: 1, problem: expect.stringContaining("execution identity") });
  });

  it("A3 a removed session leaves orphan records that verify reports", () => {
    tamper("DELETE FROM sessions WHERE session_id = 's2'");
    expect(verify()).toMatchObject({ ok: false, firstBreak: { problem: expect.stringContaining("no session row") } });
  });

  it("A3 a torn (non-JSON) record is reported", () => {
    const db = new Database(file);
    const row = db.prepare(`SELECT prev_hash FROM records WHERE session_ref = ${S1} AND seq = 2`).get() as { prev_hash: string };
    db.close();
    const torn = '{"at":"2026';
    tamper(`UPDATE records SET data = ?, hash = ? WHERE session_ref = ${S1} AND seq = 2`, torn, createHash("sha256").update(row.prev_hash + torn).digest("hex"));
    expect(verify().firstBreak).toMatchObject({ seq: 2, problem: expect.stringMatching(/torn record|broken link/) });
  });

  it("A3 chain heads are restored at open: records appended after a reopen still link", async () => {
    const journal = Journal.open({ path: file });
    await completeCall(journal, "s2", "d");
    journal.close();
    expect(verify()).toEqual({ ok: true, sessions: 2, records: 19 });
  });
});
