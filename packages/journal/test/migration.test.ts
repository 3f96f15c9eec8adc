import { copyFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { argumentsDigest, Journal, JOURNAL_ERRORS, SCHEMA_VERSION } from "../src/index.js";
import { codeOf, temporaryFolderPerTest } from "./helpers.js";

const fixtures = path.resolve(import.meta.dirname, "fixtures");

const folder = temporaryFolderPerTest();

/** A private copy of a frozen fixture: the committed file is never opened for writing. */
function copyOf(name: string): string {
  const target = folder.file(name);
  copyFileSync(path.join(fixtures, name), target);
  return target;
}

describe("schema versions and frozen databases", () => {
  it("opens the frozen schema-v1 database: history intact, chain verified, crash state recovered", () => {
    const file = copyOf("journal-v1.db");
    const journal = Journal.open({ path: file });
    try {
      expect(journal.recovered.map((call) => [call.sessionId, call.callId, call.started])).toEqual([
        ["open-2", "call-started", true],
        ["open-2", "call-waiting", false],
      ]);
      expect(journal.sessions().map((session) => [session.sessionId, session.executionIdentity, session.records, session.closedAt !== undefined])).toEqual([
        ["closed-1", "owid3:0f0e0d0c0b0a09080706050403020100", 12, true],
        ["open-2", "owid-legacy1:ffee", 7, false],
      ]);
      expect(journal.verify()).toEqual({ ok: true, sessions: 2, records: 19 });
      const closed = [...journal.records("closed-1")];
      expect(closed.map((record) => record.kind)).toEqual([
        "session_opened",
        "turn_prepared",
        "call_requested",
        "approval_decided",
        "call_started",
        "call_progress",
        "call_finished",
        "call_requested",
        "approval_decided",
        "revoked",
        "turn_finished",
        "session_closed",
      ]);
      // The frozen chain head: the v1 record format and hashing are unchanged.
      expect(closed.at(-1)?.hash).toBe("a2822228e46d93d4416da5fdcf01145b891c77bb92ceeeff896db7ea518d3451");
      expect(journal.calls("closed-1").map((call) => [call.callId, call.decision, call.outcome ?? null])).toEqual([
        ["call-ok", "approved", "succeeded"],
        ["call-denied", "denied", null],
      ]);
      expect(journal.timeline({ sessionId: "closed-1", callId: "call-ok" }).at(-1)).toMatchObject({ imageDigests: [`sha256:${"ab".repeat(32)}`] });
      expect(
        journal.findApproval({
          executionIdentity: "owid3:0f0e0d0c0b0a09080706050403020100",
          qualifiedName: "acer.battery",
          schemaFingerprint: "sha256:schema",
        }),
      ).toMatchObject({ scope: "session", by: "person", who: "ana" });
      expect(
        journal.findApproval({
          executionIdentity: "owid3:0f0e0d0c0b0a09080706050403020100",
          qualifiedName: "demo.run",
          schemaFingerprint: "sha256:s2",
          argsDigest: argumentsDigest({ n: 1 }),
        }),
      ).toMatchObject({ scope: "once" });
      // And it keeps working: new records chain onto the old heads.
      journal.callRequested({
        sessionId: "open-2",
        turnId: "t2",
        callId: "new",
        alias: "demo__run",
        qualifiedName: "demo.run",
        args: {},
        argsDigest: argumentsDigest({}),
      });
      journal.callFinished({ sessionId: "open-2", callId: "new", outcome: "cancelled" });
      journal.sessionClosed({ sessionId: "open-2" });
      expect(journal.verify()).toEqual({ ok: true, sessions: 2, records: 22 });
    } finally {
      journal.close();
    }
  });

  it("A3 E4 opens the frozen schema-v2 crash state: history intact, the tail log replayed, the start it held interrupted", () => {
    for (const suffix of ["-wal", "-tail"]) copyOf(`journal-v2.db${suffix}`);
    const file = copyOf("journal-v2.db");
    const journal = Journal.open({ path: file });
    try {
      // "tail-3" existed only in the tail log: replayed, then its started call recovered.
      expect(journal.recovered).toEqual([
        { sessionId: "tail-3", callId: "call-tail", turnId: "t1", qualifiedName: "demo.run", alias: "demo__run", started: true },
      ]);
      expect(
        journal.sessions().map((session) => [session.sessionId, session.records, session.calls, session.openCalls, session.closedAt !== undefined]),
      ).toEqual([
        ["closed-1", 9, 1, 0, true],
        ["open-2", 4, 1, 0, false],
        ["tail-3", 5, 1, 0, false],
      ]);
      expect(journal.verify()).toEqual({ ok: true, sessions: 3, records: 18 });
      const closed = [...journal.records("closed-1")];
      // The frozen chain head: the v2 record format and hashing are unchanged.
      expect(closed.at(-1)?.hash).toBe("35b422ebdde63246f458e3c4cb94e453e69ea97ed938199f40893787b3048490");
      expect(journal.calls("open-2").map((call) => [call.callId, call.outcome])).toEqual([["call-approved", "interrupted"]]);
      expect(journal.findApproval({ executionIdentity: "owid3:0f0e", qualifiedName: "acer.battery", schemaFingerprint: "sha256:schema" })).toMatchObject({
        who: "ana",
      });
      journal.callRequested({ sessionId: "tail-3", turnId: "t2", callId: "new", alias: "demo__run", qualifiedName: "demo.run", args: {} });
      journal.callFinished({ sessionId: "tail-3", callId: "new", outcome: "cancelled" });
      expect(journal.verify()).toEqual({ ok: true, sessions: 3, records: 20 });
    } finally {
      journal.close();
    }
  });

  it("creates a new file at the current schema version, with its folders", () => {
    const file = folder.file("deep/state/journal.db");
    Journal.open({ path: file }).close();
    const db = new Database(file, { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
  });

  it("refuses a file written by a newer schema version", async () => {
    const file = copyOf("journal-v1.db");
    const db = new Database(file);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(await codeOf(() => Journal.open({ path: file }))).toBe(JOURNAL_ERRORS.SCHEMA_TOO_NEW);
    expect(await codeOf(() => Journal.open({ path: file, readonly: true }))).toBe(JOURNAL_ERRORS.SCHEMA_TOO_NEW);
  });

  it("refuses a SQLite file that is not a journal, and a file that is not SQLite", async () => {
    const other = folder.file("other.db");
    const db = new Database(other);
    db.exec("CREATE TABLE notes (text TEXT)");
    db.close();
    expect(await codeOf(() => Journal.open({ path: other }))).toBe(JOURNAL_ERRORS.NOT_A_JOURNAL);
    const garbage = folder.file("garbage.db");
    writeFileSync(garbage, "this is not a database, just text that is long enough to have a header");
    expect(await codeOf(() => Journal.open({ path: garbage }))).toBe(JOURNAL_ERRORS.OPEN_FAILED);
  });

  it("a reader never migrates: it refuses an unmigrated file, an empty one and a missing one", async () => {
    const unmigrated = copyOf("journal-v1.db");
    expect(await codeOf(() => Journal.open({ path: unmigrated, readonly: true }))).toBe(JOURNAL_ERRORS.NEEDS_MIGRATION);
    const empty = folder.file("empty.db");
    new Database(empty).close();
    expect(await codeOf(() => Journal.open({ path: empty, readonly: true }))).toBe(JOURNAL_ERRORS.EMPTY);
    expect(await codeOf(() => Journal.open({ path: folder.file("missing.db"), readonly: true }))).toBe(JOURNAL_ERRORS.OPEN_FAILED);
  });

  it("refuses an unknown durability", async () => {
    expect(await codeOf(() => Journal.open({ path: folder.file("j.db"), durability: "eventual" as never }))).toBe(JOURNAL_ERRORS.INVALID_RECORD);
  });
});
