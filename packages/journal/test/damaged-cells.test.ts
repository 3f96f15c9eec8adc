import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { Journal, JOURNAL_ERRORS } from "../src/index.js";
import { completeCall, openSession, request, temporaryFolderPerTest } from "./helpers.js";

// Cells of a type the journal never writes (a blob where a frame holds text, a record whose
// content is JSON `null` under a recomputed hash, a head row that is not JSON): verify()
// reports them as a break and never throws; readers throw JOURNAL_DAMAGED naming the
// session, never a TypeError.

const folder = temporaryFolderPerTest();
let file: string;

// "s1" (closed, 2 calls in separate frames: 10 records) and "s2" (open, one call waiting).
beforeEach(async () => {
  file = folder.file("journal.db");
  const journal = Journal.open({ path: file });
  openSession(journal, "s1");
  await journal.flush();
  await completeCall(journal, "s1", "c1");
  await journal.flush();
  await completeCall(journal, "s1", "c2");
  journal.sessionClosed({ sessionId: "s1" });
  openSession(journal, "s2");
  request(journal, "s2", "waiting");
  journal.close();
});

function withFile<T>(run: (db: Database.Database) => T): T {
  const db = new Database(file);
  try {
    return run(db);
  } finally {
    db.close();
  }
}

/** The id and body of s1's frame holding `seq`. */
function frameOf(db: Database.Database, seq: number): { id: number; first_seq: number; body: string } {
  return db
    .prepare<[number, number], { id: number; first_seq: number; body: string }>(
      "SELECT id, first_seq, body FROM frames WHERE session_ref = (SELECT ref FROM sessions WHERE session_id = 's1') AND first_seq <= ? ORDER BY first_seq DESC LIMIT ?",
    )
    .get(seq, 1)!;
}

function reader(): Journal {
  return Journal.open({ path: file, readonly: true });
}

async function damagedError(run: () => unknown): Promise<{ code?: string; message: string }> {
  try {
    await run();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error("expected JOURNAL_DAMAGED");
}

describe("cells of the wrong type (A3)", () => {
  it("A3 a frame body stored as a blob: verify reports it at the frame's first seq; readers throw JOURNAL_DAMAGED naming the session and frame", async () => {
    const frame = withFile((db) => {
      const found = frameOf(db, 2);
      db.prepare("UPDATE frames SET body = CAST(body AS BLOB) WHERE id = ?").run(found.id);
      return found;
    });
    const journal = reader();
    try {
      expect(journal.verify()).toMatchObject({
        ok: false,
        firstBreak: {
          sessionId: "s1",
          seq: frame.first_seq,
          problem: `damaged frame: frame ${frame.id} holds a blob where the journal writes its records as text`,
        },
      });
      for (const read of [
        () => [...journal.records("s1")],
        () => journal.calls("s1"),
        () => [...journal.exportSession("s1")],
        () => journal.timeline({ sessionId: "s1", callId: "c2" }),
      ]) {
        const error = await damagedError(read);
        expect(error.code).toBe(JOURNAL_ERRORS.DAMAGED);
        expect(error.message).toContain(`session "s1": frame ${frame.id} holds a blob where the journal writes its records as text`);
      }
      // Other sessions still read.
      expect(journal.calls("s2").map((call) => call.callId)).toEqual(["waiting"]);
    } finally {
      journal.close();
    }
  });

  it("A3 a record whose content is JSON null under a recomputed hash: verify reports it; readers throw JOURNAL_DAMAGED naming the session and seq", async () => {
    withFile((db) => {
      const frame = frameOf(db, 7);
      const lines = frame.body.split("\n");
      const at = 7 - frame.first_seq;
      const previous =
        at === 0
          ? frameOf(db, frame.first_seq - 1)
              .body.split("\n")
              .at(-1)!
              .slice(0, 64)
          : lines[at - 1]!.slice(0, 64);
      lines[at] = `${createHash("sha256").update(`${previous}null`).digest("hex")} null`;
      db.prepare("UPDATE frames SET body = ? WHERE id = ?").run(lines.join("\n"), frame.id);
    });
    const journal = reader();
    try {
      expect(journal.verify()).toMatchObject({
        ok: false,
        records: 6,
        firstBreak: { sessionId: "s1", seq: 7, problem: "altered record: its content is null, not a JSON object" },
      });
      const error = await damagedError(() => journal.calls("s1"));
      expect(error.code).toBe(JOURNAL_ERRORS.DAMAGED);
      expect(error.message).toContain('session "s1": record 7: altered record: its content is null, not a JSON object');
    } finally {
      journal.close();
    }
  });

  it("A3 a head row whose open calls are not JSON: verify reports the column; sessions() and session() throw JOURNAL_DAMAGED naming the session", async () => {
    withFile((db) => db.prepare("UPDATE live_sessions SET open_calls = '{bad' WHERE ref = (SELECT ref FROM sessions WHERE session_id = 's2')").run());
    const journal = reader();
    try {
      expect(journal.verify().firstBreak).toMatchObject({
        sessionId: "s2",
        problem: expect.stringContaining("live_sessions.open_calls is text that is not the JSON"),
      });
      for (const read of [() => journal.sessions(), () => journal.session("s2")]) {
        const error = await damagedError(read);
        expect(error.code).toBe(JOURNAL_ERRORS.DAMAGED);
        expect(error.message).toContain(`session "s2": its head row's open_calls is not the JSON object of open calls the journal writes`);
      }
      expect(journal.session("s1")).toMatchObject({ records: 10, calls: 2, openCalls: 0 });
    } finally {
      journal.close();
    }
  });

  it("A3 verify never throws on odd cells: a blob where a frame's first seq is, a blob where a head row's open calls are", () => {
    withFile((db) => {
      db.prepare("UPDATE frames SET first_seq = x'00' WHERE id = ?").run(frameOf(db, 2).id);
      db.prepare("UPDATE live_sessions SET open_calls = x'7b7d'").run();
    });
    const journal = reader();
    try {
      expect(journal.verify()).toMatchObject({
        ok: false,
        firstBreak: { sessionId: "s1", seq: 2, problem: "missing record: expected seq 2, found seq a blob" },
      });
      expect(journal.verify("s2")).toMatchObject({
        ok: false,
        firstBreak: {
          sessionId: "s2",
          problem: "altered index: live_sessions.open_calls is a blob that is not the JSON object of open calls the journal writes",
        },
      });
    } finally {
      journal.close();
    }
  });
});
