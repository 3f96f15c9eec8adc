import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Journal } from "../src/index.js";
import { completeCall, openSession, temporaryFolder, tamperWith } from "./helpers.js";

// `verify()` must name the first record that is missing or broken (the seq after the
// last good one), wherever the chain is cut: walking back from the head alone stops at
// the newest gap and cannot see the records before it.

let folder: ReturnType<typeof temporaryFolder>;
let file: string;

// "open" (open, 1 + 3 × 8 records) and "closed" (closed, 1 + 2 × 4 + 1), each in several
// frames (a flush between steps), interleaved in the table as a busy writer leaves them.
beforeEach(async () => {
  folder = temporaryFolder();
  file = folder.file("journal.db");
  const journal = Journal.open({ path: file });
  openSession(journal, "open");
  openSession(journal, "closed");
  await journal.flush();
  for (const round of [1, 2, 3]) {
    await completeCall(journal, "open", `a${round}`);
    await completeCall(journal, "open", `b${round}`);
    if (round < 3) await completeCall(journal, "closed", `c${round}`);
    await journal.flush();
  }
  journal.sessionClosed({ sessionId: "closed" });
  journal.close();
});

afterEach(() => folder.remove());

interface FrameRow {
  id: number;
  first_seq: number;
  prev_frame: number | null;
}

/** The session's frames, oldest first. */
function framesOf(sessionId: string): FrameRow[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare<[string], FrameRow>(
        "SELECT id, first_seq, prev_frame FROM frames WHERE session_ref = (SELECT ref FROM sessions WHERE session_id = ?) ORDER BY id",
      )
      .all(sessionId);
  } finally {
    db.close();
  }
}

const tamper = (sql: string, ...params: unknown[]): void => tamperWith(file, sql, ...params);

function withReader<T>(read: (journal: Journal) => T): T {
  const journal = Journal.open({ path: file, readonly: true });
  try {
    return read(journal);
  } finally {
    journal.close();
  }
}

const verify = (sessionId?: string) => withReader((journal) => journal.verify(sessionId));

describe("verify names the first missing record (A3)", () => {
  it("A3 the journal under test verifies and holds several frames per session", () => {
    expect(verify()).toEqual({ ok: true, sessions: 2, records: 25 + 10 });
    expect(framesOf("open").length).toBeGreaterThanOrEqual(4);
    expect(framesOf("closed").length).toBeGreaterThanOrEqual(4);
  });

  it("A3 a deleted middle frame is reported at its first seq, not at record 1", () => {
    const frames = framesOf("open");
    const gone = frames[1]!;
    tamper("DELETE FROM frames WHERE id = ?", gone.id);
    const report = verify();
    expect(report).toMatchObject({
      ok: false,
      records: gone.first_seq - 1,
      firstBreak: { sessionId: "open", seq: gone.first_seq, problem: expect.stringContaining(`frame ${gone.id} of the chain is gone`) },
    });
    expect(report.firstBreak!.problem).toContain(`resumes at seq ${frames[2]!.first_seq}`);
    expect(verify("open").firstBreak).toEqual(report.firstBreak);
  });

  it("A3 a deleted first frame is reported at seq 1", () => {
    const frames = framesOf("open");
    tamper("DELETE FROM frames WHERE id = ?", frames[0]!.id);
    expect(verify("open")).toMatchObject({
      ok: false,
      records: 0,
      firstBreak: { sessionId: "open", seq: 1, problem: expect.stringContaining(`frame ${frames[0]!.id} of the chain is gone`) },
    });
  });

  it("A3 a deleted last frame of an open session is reported at the first seq it held", () => {
    const frames = framesOf("open");
    const last = frames.at(-1)!;
    tamper("DELETE FROM frames WHERE id = ?", last.id);
    expect(verify("open")).toMatchObject({
      ok: false,
      records: last.first_seq - 1,
      firstBreak: {
        sessionId: "open",
        seq: last.first_seq,
        problem: expect.stringMatching(new RegExp(`frame ${last.id} of the chain is gone.*head row says seq 25`)),
      },
    });
  });

  it("A3 a deleted last frame of a closed session is reported at the first seq it held", () => {
    const last = framesOf("closed").at(-1)!;
    tamper("DELETE FROM frames WHERE id = ?", last.id);
    expect(verify()).toMatchObject({
      ok: false,
      firstBreak: { sessionId: "closed", seq: last.first_seq, problem: expect.stringMatching(/gone.*closed at seq 10/) },
    });
  });

  it("A3 two gaps: the older one is reported", () => {
    const frames = framesOf("open");
    tamper("DELETE FROM frames WHERE id IN (?, ?)", frames[1]!.id, frames[3]!.id);
    expect(verify("open").firstBreak).toMatchObject({
      seq: frames[1]!.first_seq,
      problem: expect.stringContaining(`frame ${frames[1]!.id} of the chain is gone`),
    });
  });

  it("A3 a frame relinked to another session's frame is reported at its first seq", () => {
    const frames = framesOf("open");
    const other = framesOf("closed")
      .filter((frame) => frame.id < frames[2]!.id)
      .at(-1)!;
    tamper("UPDATE frames SET prev_frame = ? WHERE id = ?", other.id, frames[2]!.id);
    expect(verify("open").firstBreak).toMatchObject({ seq: frames[2]!.first_seq, problem: expect.stringContaining("another session") });
  });

  it("A3 an open session without its head row is checked from its first record", () => {
    tamper("DELETE FROM live_sessions WHERE ref = (SELECT ref FROM sessions WHERE session_id = 'open')");
    expect(verify("open")).toMatchObject({ ok: false, records: 25, firstBreak: { seq: 26, problem: expect.stringContaining("no head row") } });
    // A record altered before the end is still the first break.
    const frames = framesOf("open");
    const db = new Database(file, { readonly: true });
    const altered = frames.findIndex(
      (frame, index) => index > 0 && (db.prepare("SELECT body FROM frames WHERE id = ?").pluck().get(frame.id) as string).includes('"ok":true'),
    );
    db.close();
    tamper("UPDATE frames SET body = replace(body, '\"ok\":true', '\"ok\":false') WHERE id = ?", frames[altered]!.id);
    expect(verify("open").firstBreak).toMatchObject({ problem: expect.stringContaining("altered record") });
    expect(verify("open").firstBreak!.seq).toBeGreaterThanOrEqual(frames[altered]!.first_seq);
    expect(verify("open").firstBreak!.seq).toBeLessThan(frames[altered + 1]!.first_seq);
  });

  it("A3 an inserted frame no chain reaches is reported at the seq it claims", () => {
    const frames = framesOf("open");
    tamper(
      "INSERT INTO frames (session_ref, first_seq, prev_frame, body) SELECT session_ref, first_seq, prev_frame, body FROM frames WHERE id = ?",
      frames[2]!.id,
    );
    expect(verify()).toMatchObject({
      ok: false,
      firstBreak: { sessionId: "open", seq: frames[2]!.first_seq, problem: expect.stringContaining("not on its chain") },
    });
  });

  it("A3 records and export of a chain with a missing frame end where it breaks", () => {
    const frames = framesOf("open");
    tamper("DELETE FROM frames WHERE id = ?", frames[1]!.id);
    const seqs = withReader((journal) => [...journal.records("open")].map((record) => [record.seq, record.prevHash.length]));
    expect(seqs).toEqual([[1, 64]]);
    const lines = withReader((journal) => [...journal.exportSession("open")]);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ seq: 1, kind: "session_opened", prevHash: "0".repeat(64) });
  });
});
