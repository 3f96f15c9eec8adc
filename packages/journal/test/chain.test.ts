import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Journal } from "../src/index.js";
import { completeCall, openSession, temporaryFolder, tamperWith, verifyFile } from "./helpers.js";

let folder: ReturnType<typeof temporaryFolder>;
let file: string;

// Two sessions: "s1" (closed, 10 records) and "s2" (open, 5 records).
beforeEach(async () => {
  folder = temporaryFolder();
  file = folder.file("journal.db");
  const journal = Journal.open({ path: file });
  openSession(journal, "s1");
  openSession(journal, "s2");
  // A flush between steps: several frames per session, so links between frames are tested.
  await journal.flush();
  await completeCall(journal, "s1", "a");
  await journal.flush();
  await completeCall(journal, "s2", "b");
  await journal.flush();
  await completeCall(journal, "s1", "c");
  await journal.flush();
  journal.sessionClosed({ sessionId: "s1" });
  journal.close();
});

afterEach(() => folder.remove());

const tamper = (sql: string, ...params: unknown[]): void => tamperWith(file, sql, ...params);

const verify = (sessionId?: string) => verifyFile(file, sessionId);

const S1 = "(SELECT ref FROM sessions WHERE session_id = 's1')";

/** Rewrites the stored line of one record of s1 (`null` removes it), inside its frame. */
function rewriteLine(seq: number, change: (line: string) => string | null): void {
  const db = new Database(file);
  try {
    const frames = db.prepare(`SELECT id, first_seq, body FROM frames WHERE session_ref = ${S1}`).all() as { id: number; first_seq: number; body: string }[];
    const frame = frames.find((row) => row.first_seq <= seq && seq < row.first_seq + row.body.split("\n").length)!;
    const lines = frame.body.split("\n");
    const changed = change(lines[seq - frame.first_seq]!);
    if (changed === null) lines.splice(seq - frame.first_seq, 1);
    else lines[seq - frame.first_seq] = changed;
    db.prepare("UPDATE frames SET body = ? WHERE id = ?").run(lines.join("\n"), frame.id);
  } finally {
    db.close();
  }
}

function lineOf(seq: number): { hash: string; data: string } {
  let found = "";
  rewriteLine(seq, (line) => (found = line));
  return { hash: found.slice(0, 64), data: found.slice(65) };
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("record chain (A3)", () => {
  it("A3 an untouched journal verifies, whole and per session", () => {
    expect(verify()).toEqual({ ok: true, sessions: 2, records: 15 });
    expect(verify("s2")).toEqual({ ok: true, sessions: 1, records: 5 });
  });

  it("A3 an altered record is the first break, at its seq", () => {
    rewriteLine(5, (line) => line.replace('"ok":true', '"ok":false'));
    expect(verify()).toMatchObject({ ok: false, firstBreak: { sessionId: "s1", seq: 5, problem: expect.stringContaining("altered record") } });
    expect(verify("s2").ok).toBe(true);
  });

  it("A3 a record rewritten with a fresh hash breaks the link of the next one", () => {
    const previous = lineOf(2).hash;
    const data = lineOf(3).data.replace('"by":"person"', '"by":"policy"');
    expect(data).not.toBe(lineOf(3).data);
    rewriteLine(3, () => `${sha256(previous + data)} ${data}`);
    expect(verify().firstBreak).toMatchObject({ sessionId: "s1", seq: 4, problem: expect.stringContaining("broken link") });
  });

  it("A3 a deleted record is reported as the missing link", () => {
    rewriteLine(6, () => null);
    expect(verify().firstBreak).toMatchObject({ sessionId: "s1", seq: 6, problem: expect.stringMatching(/missing record|broken link/) });
  });

  it("A3 a deleted frame is reported as the missing link", () => {
    tamper(`DELETE FROM frames WHERE session_ref = ${S1} AND first_seq = (SELECT min(first_seq) FROM frames WHERE session_ref = ${S1} AND first_seq > 1)`);
    expect(verify()).toMatchObject({ ok: false, firstBreak: { sessionId: "s1", problem: expect.stringContaining("missing record") } });
  });

  it("A3 a cut-off tail of a closed session is a missing link", () => {
    tamper(`UPDATE sessions SET final_frame = (SELECT prev_frame FROM frames WHERE id = final_frame) WHERE ref = ${S1}`);
    expect(verify().firstBreak).toMatchObject({ sessionId: "s1", problem: expect.stringContaining("closed at seq 10") });
  });

  it("A3 a frame moved to another session's chain is a break", () => {
    tamper(`UPDATE frames SET session_ref = (SELECT ref FROM sessions WHERE session_id = 's2') WHERE session_ref = ${S1} AND first_seq > 1`);
    expect(verify()).toMatchObject({ ok: false, firstBreak: { sessionId: "s1" } });
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
    const previous = lineOf(1).hash;
    const torn = '{"at":"2026';
    rewriteLine(2, () => `${sha256(previous + torn)} ${torn}`);
    expect(verify().firstBreak).toMatchObject({ seq: 2, problem: expect.stringContaining("torn record") });
  });

  it("A3 a line cut in the middle is a torn record", () => {
    rewriteLine(2, (line) => line.slice(0, 30));
    expect(verify().firstBreak).toMatchObject({ seq: 2, problem: expect.stringContaining("torn record") });
  });

  it("A3 chain heads are restored at open: records appended after a reopen still link", async () => {
    const journal = Journal.open({ path: file });
    await completeCall(journal, "s2", "d");
    journal.close();
    expect(verify()).toEqual({ ok: true, sessions: 2, records: 19 });
  });
});
