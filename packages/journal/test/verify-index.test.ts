import { copyFileSync } from "node:fs";
import Database from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Journal } from "../src/index.js";
import { approve, completeCall, request, temporaryFolder, type TemporaryFolder, tamperWith, verifyFile } from "./helpers.js";

// The session rows and head rows are an index the journal keeps beside the hashed
// records; verify() holds every column to what the chain says (docs/operate.md: "an
// index that disagrees with the hashed text").

let template: TemporaryFolder;
let folder: TemporaryFolder;
let file: string;

// "closed" (closed, bundle folder, a call done and one denied: 8 records) and "open"
// (open: "done" finished, "denied", "waiting" requested, "approved" by policy,
// "running" started by a person: 13 records).
beforeAll(async () => {
  template = temporaryFolder();
  const journal = Journal.open({ path: template.file("journal.db") });
  journal.sessionOpened({ sessionId: "closed", executionIdentity: "owid3:index", identityInputs: {}, workspace: "/work", bundleDir: "/bundles/one" });
  await completeCall(journal, "closed", "done");
  request(journal, "closed", "denied");
  journal.approvalDecided({ sessionId: "closed", callId: "denied", decision: "denied", by: "person", scope: "once", key: "k" });
  journal.sessionClosed({ sessionId: "closed" });
  journal.sessionOpened({ sessionId: "open", executionIdentity: "owid3:index", identityInputs: {}, workspace: "/work" });
  await completeCall(journal, "open", "done");
  request(journal, "open", "denied");
  journal.approvalDecided({ sessionId: "open", callId: "denied", decision: "denied", by: "policy", scope: "once", key: "k" });
  request(journal, "open", "waiting");
  request(journal, "open", "approved");
  approve(journal, "open", "approved", "policy");
  request(journal, "open", "running");
  approve(journal, "open", "running", "person");
  await journal.callStarted({ sessionId: "open", callId: "running" });
  journal.close();
});

afterAll(() => template.remove());

beforeEach(() => {
  folder?.remove();
  folder = temporaryFolder();
  file = folder.file("journal.db");
  copyFileSync(template.file("journal.db"), file);
});

afterAll(() => folder?.remove());

const tamper = (sql: string, ...params: unknown[]): void => tamperWith(file, sql, ...params);

const verify = (sessionId?: string) => verifyFile(file, sessionId);

const CLOSED = "ref = (SELECT ref FROM sessions WHERE session_id = 'closed')";
const OPEN = "ref = (SELECT ref FROM sessions WHERE session_id = 'open')";

describe("verify holds the index columns to the chain (A3)", () => {
  const opening: [string, string, string][] = [
    [
      "sessions.workspace",
      `UPDATE sessions SET workspace = '/elsewhere' WHERE ${CLOSED}`,
      'sessions.workspace is "/elsewhere", but the session_opened record says "/work"',
    ],
    [
      "sessions.bundle_dir",
      `UPDATE sessions SET bundle_dir = '/bundles/two' WHERE ${CLOSED}`,
      'sessions.bundle_dir is "/bundles/two", but the session_opened record says "/bundles/one"',
    ],
    [
      "sessions.bundle_dir (removed)",
      `UPDATE sessions SET bundle_dir = NULL WHERE ${CLOSED}`,
      'sessions.bundle_dir is NULL, but the session_opened record says "/bundles/one"',
    ],
    [
      "sessions.bundle_dir (added)",
      `UPDATE sessions SET bundle_dir = '/bundles/two' WHERE ${OPEN}`,
      'sessions.bundle_dir is "/bundles/two", but the session_opened record has none',
    ],
    [
      "sessions.opened_at",
      `UPDATE sessions SET opened_at = '2020-01-01T00:00:00.000Z' WHERE ${CLOSED}`,
      'sessions.opened_at is "2020-01-01T00:00:00.000Z", but the session_opened record says "',
    ],
  ];
  it.each(opening)("A3 an edited %s is a break at the session_opened record, naming the column", (_column, sql, problem) => {
    tamper(sql);
    const report = verify();
    expect(report.ok).toBe(false);
    expect(report.firstBreak?.seq).toBe(1);
    expect(report.firstBreak?.problem).toContain(`altered index: ${problem}`);
  });

  it("A3 an edited sessions.closed_at is a break at the session_closed record", () => {
    tamper(`UPDATE sessions SET closed_at = '2030-01-01T00:00:00.000Z' WHERE ${CLOSED}`);
    expect(verify().firstBreak).toMatchObject({
      sessionId: "closed",
      seq: 8,
      problem: expect.stringMatching(/^altered index: sessions.closed_at is "2030-01-01T00:00:00.000Z", but the session_closed record says "20/),
    });
  });

  it("A3 an edited sessions.final_calls is a break naming the column and the chain's count", () => {
    // Untouched, every index column agrees with the chain.
    expect(verify()).toEqual({ ok: true, sessions: 2, records: 21 });
    expect(verify("open")).toEqual({ ok: true, sessions: 1, records: 13 });
    tamper(`UPDATE sessions SET final_calls = 0 WHERE ${CLOSED}`);
    expect(verify().firstBreak).toMatchObject({
      sessionId: "closed",
      seq: 8,
      problem: "altered index: sessions.final_calls is 0, but the chain holds 2 call_requested record(s)",
    });
  });

  it("A3 an edited live_sessions.calls is a break naming the column and the chain's count", () => {
    tamper(`UPDATE live_sessions SET calls = 99 WHERE ${OPEN}`);
    expect(verify("open").firstBreak).toMatchObject({
      sessionId: "open",
      seq: 13,
      problem: "altered index: live_sessions.calls is 99, but the chain holds 5 call_requested record(s)",
    });
  });

  const openCalls: [string, string, string][] = [
    [
      "a finished call listed as open",
      '{"waiting":["requested"],"approved":["approved","policy"],"running":["started","person"],"done":["started","person"]}',
      'live_sessions.open_calls lists call "done" as open (started), but the chain has no such open call',
    ],
    [
      "a denied call listed as open",
      '{"waiting":["requested"],"approved":["approved","policy"],"running":["started","person"],"denied":["requested"]}',
      'live_sessions.open_calls lists call "denied" as open (requested), but the chain has no such open call',
    ],
    [
      "a call never requested listed as open",
      '{"waiting":["requested"],"approved":["approved","policy"],"running":["started","person"],"ghost":["started","bypass"]}',
      'live_sessions.open_calls lists call "ghost" as open (started)',
    ],
    [
      "an open call left out",
      '{"waiting":["requested"],"running":["started","person"]}',
      'live_sessions.open_calls omits call "approved", which the chain leaves open',
    ],
    [
      "an open call in another phase",
      '{"waiting":["requested"],"approved":["started","policy"],"running":["started","person"]}',
      'live_sessions.open_calls gives call "approved" as ["started","policy"], the chain as ["approved","policy"]',
    ],
    ["a cell that is not JSON", "{bad", "live_sessions.open_calls is text that is not the JSON object of open calls the journal writes"],
  ];
  it.each(openCalls)("A3 live_sessions.open_calls with %s is a break naming the column", (_case, cell, problem) => {
    tamper(`UPDATE live_sessions SET open_calls = ? WHERE ${OPEN}`, cell);
    const report = verify();
    expect(report).toMatchObject({ ok: false, firstBreak: { sessionId: "open", seq: 13 } });
    expect(report.firstBreak?.problem).toContain(`altered index: ${problem}`);
  });

  it("A3 the same open calls in another order are no break; another decider among them is", () => {
    tamper(
      `UPDATE live_sessions SET open_calls = ? WHERE ${OPEN}`,
      '{"running":["started","person"],"waiting":["requested"],"approved":["approved","policy"]}',
    );
    expect(verify()).toMatchObject({ ok: true });
    tamper(
      `UPDATE live_sessions SET open_calls = ? WHERE ${OPEN}`,
      '{"running":["started","bypass"],"waiting":["requested"],"approved":["approved","policy"]}',
    );
    expect(verify().firstBreak?.problem).toBe(
      'altered index: live_sessions.open_calls gives call "running" as ["started","bypass"], the chain as ["started","person"]',
    );
  });

  it("A3 a closed session cut short with its final seq and hash moved back (closed_at kept) is a break: its chain no longer ends with session_closed", () => {
    const db = new Database(file);
    try {
      const last = db
        .prepare(`SELECT id, first_seq, body FROM frames WHERE session_ref = (SELECT ${CLOSED.replace("ref = ", "")}) ORDER BY id DESC LIMIT 1`)
        .get() as {
        id: number;
        first_seq: number;
        body: string;
      };
      const lines = last.body.split("\n");
      lines.pop();
      db.prepare("UPDATE frames SET body = ? WHERE id = ?").run(lines.join("\n"), last.id);
      db.prepare(`UPDATE sessions SET final_seq = ?, final_hash = ? WHERE ${CLOSED}`).run(last.first_seq + lines.length - 1, lines.at(-1)!.slice(0, 64));
    } finally {
      db.close();
    }
    expect(verify().firstBreak).toMatchObject({
      sessionId: "closed",
      seq: 7,
      problem: "altered index: sessions.closed_at says the session closed, but its chain ends with approval_decided, not session_closed",
    });
  });

  it("A3 a closed session that still has a head row is a break", () => {
    tamper(`INSERT INTO live_sessions (ref, head_frame, seq, hash, calls, open_calls)
      SELECT ref, final_frame, final_seq, final_hash, final_calls, '{}' FROM sessions WHERE ${CLOSED}`);
    expect(verify().firstBreak).toMatchObject({ sessionId: "closed", problem: expect.stringContaining("still has a live_sessions head row") });
  });
});
