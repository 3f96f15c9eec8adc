import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { Journal, JOURNAL_ERRORS } from "../src/index.js";
import { approve, codeOf, completeCall, openSession, request, temporaryFolderPerTest } from "./helpers.js";

// Recovery finds open calls in the head rows, an index beside the records: it confirms
// every claimed call against the chain before it writes anything for it (A3: one terminal
// record per call, and nothing for a call never requested).

const folder = temporaryFolderPerTest();
let file: string;

// "s1" left open by its writer: "done" finished, "denied" denied, "running" started;
// "s2" open with "waiting" requested.
beforeEach(async () => {
  file = folder.file("journal.db");
  const journal = Journal.open({ path: file });
  openSession(journal, "s1");
  await completeCall(journal, "s1", "done");
  request(journal, "s1", "denied");
  journal.approvalDecided({ sessionId: "s1", callId: "denied", decision: "denied", by: "person", scope: "once", key: "k" });
  request(journal, "s1", "running");
  approve(journal, "s1", "running");
  await journal.callStarted({ sessionId: "s1", callId: "running" });
  openSession(journal, "s2");
  request(journal, "s2", "waiting");
  journal.close();
});

function setOpenCalls(sessionId: string, cell: string): void {
  const db = new Database(file);
  try {
    db.prepare("UPDATE live_sessions SET open_calls = ? WHERE ref = (SELECT ref FROM sessions WHERE session_id = ?)").run(cell, sessionId);
  } finally {
    db.close();
  }
}

function terminalRecords(journal: Journal, sessionId: string, callId: string) {
  return journal.timeline({ sessionId, callId }).filter((record) => record.kind === "call_finished");
}

describe("recovery confirms the head row's open calls against the chain (A3)", () => {
  it("A3 a head row claiming a finished call is open: no second terminal record; the claim is dropped and reported", async () => {
    setOpenCalls("s1", '{"running":["started","person"],"done":["started","person"]}');
    const journal = Journal.open({ path: file });
    try {
      expect(journal.recovered.map((call) => [call.sessionId, call.callId, call.started])).toEqual([
        ["s1", "running", true],
        ["s2", "waiting", false],
      ]);
      expect(journal.warnings).toEqual([
        {
          kind: "open-call-contradicted",
          sessionId: "s1",
          callId: "done",
          message: expect.stringContaining('lists call "done" as open (started), but its chain holds its terminal record (call_finished, succeeded) at seq 5'),
        },
      ]);
      expect(terminalRecords(journal, "s1", "done").map((record) => record.outcome)).toEqual(["succeeded"]);
      expect(terminalRecords(journal, "s1", "running").map((record) => record.outcome)).toEqual(["interrupted"]);
      // The writer's state agrees with the chain: the call is over, the session may close.
      expect(await codeOf(() => journal.callFinished({ sessionId: "s1", callId: "done", outcome: "failed" }))).toBe(JOURNAL_ERRORS.TERMINAL_EXISTS);
      journal.sessionClosed({ sessionId: "s1" });
      expect(journal.verify()).toMatchObject({ ok: true });
    } finally {
      journal.close();
    }
  });

  it("A3 a head row claiming a call the chain never requested: nothing is appended for it; the claim is dropped and reported", async () => {
    setOpenCalls("s2", '{"waiting":["requested"],"ghost":["started","bypass"]}');
    const journal = Journal.open({ path: file });
    try {
      expect(journal.recovered.map((call) => call.callId)).toEqual(["running", "waiting"]);
      expect(journal.warnings).toEqual([
        expect.objectContaining({
          kind: "open-call-contradicted",
          sessionId: "s2",
          callId: "ghost",
          message: expect.stringContaining("its chain holds no call_requested record for it"),
        }),
      ]);
      expect(journal.timeline({ sessionId: "s2", callId: "ghost" })).toEqual([]);
      expect(journal.calls("s2").map((call) => call.callId)).toEqual(["waiting"]);
      expect(await codeOf(() => journal.callFinished({ sessionId: "s2", callId: "ghost", outcome: "failed" }))).toBe(JOURNAL_ERRORS.UNKNOWN_CALL);
      expect(journal.verify()).toMatchObject({ ok: true });
    } finally {
      journal.close();
    }
  });

  it("A3 a head row claiming a denied call is open: no terminal record is written for it", () => {
    setOpenCalls("s1", '{"running":["started","person"],"denied":["requested"]}');
    const journal = Journal.open({ path: file });
    try {
      expect(journal.recovered.map((call) => call.callId)).toEqual(["running", "waiting"]);
      expect(journal.warnings).toEqual([
        expect.objectContaining({ kind: "open-call-contradicted", callId: "denied", message: expect.stringContaining("its chain holds its denial at seq 7") }),
      ]);
      expect(terminalRecords(journal, "s1", "denied")).toEqual([]);
    } finally {
      journal.close();
    }
  });

  it("A3 E4 a head row that understates a call's phase: the chain's start makes the interrupted call `started`", () => {
    setOpenCalls("s1", '{"running":["approved","person"]}');
    const journal = Journal.open({ path: file });
    try {
      expect(journal.recovered.find((call) => call.callId === "running")).toMatchObject({ started: true, qualifiedName: "demo.run", turnId: "t1" });
      expect(journal.warnings).toEqual([]);
    } finally {
      journal.close();
    }
  });

  it("A3 a head row whose open calls are not JSON: the writer opens, reports the session, recovers the others, and refuses writes to it (JOURNAL_DAMAGED)", async () => {
    setOpenCalls("s2", "{bad");
    const journal = Journal.open({ path: file });
    try {
      expect(journal.recovered.map((call) => [call.sessionId, call.callId])).toEqual([["s1", "running"]]);
      expect(journal.warnings).toEqual([
        expect.objectContaining({
          kind: "session-damaged",
          sessionId: "s2",
          message: expect.stringContaining('session "s2": its head row\'s open_calls is not the JSON'),
        }),
      ]);
      expect(await codeOf(() => request(journal, "s2", "another"))).toBe(JOURNAL_ERRORS.DAMAGED);
      await completeCall(journal, "s1", "after");
    } finally {
      journal.close();
    }
  });
});
