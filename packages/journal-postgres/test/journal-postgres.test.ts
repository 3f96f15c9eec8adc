import { createHash } from "node:crypto";
import { argumentsDigest, JOURNAL_ERRORS } from "@openworker/journal";
import { canonicalJson, OpenWorkerError } from "@openworker/tools-sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOURNAL_POSTGRES_ERRORS, PostgresJournal, redactConnectionString } from "../src/index.js";
import { startPostgres, type PostgresServer } from "../src/testing/postgres-server.js";

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const identity = "owid3:one";
function openSession(journal: PostgresJournal, sessionId: string): void {
  journal.sessionOpened({ sessionId, executionIdentity: identity, identityInputs: { test: true }, workspace: "/w" });
  journal.turnPrepared({ sessionId, turnId: "t1", selectionFingerprint: "sha256:sel", catalogFingerprints: {} });
}
async function runCall(journal: PostgresJournal, sessionId: string, callId: string, finish = true): Promise<void> {
  journal.callRequested({ sessionId, turnId: "t1", callId, alias: "a__b", qualifiedName: "a.b", args: { callId } });
  journal.approvalDecided({ sessionId, callId, decision: "approved", by: "person", scope: "once", key: "k" });
  await journal.callStarted({ sessionId, callId });
  if (finish) journal.callFinished({ sessionId, callId, outcome: "succeeded", result: { ok: true } });
}
async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, options: "-c search_path=openworker_journal" });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe("PostgresJournal", () => {
  it("A3: records, chains and export are the SQLite journal's: each exported line re-hashes onto the one before", async () => {
    const url = await server.database("chains");
    const journal = await PostgresJournal.open({ connectionString: url });
    openSession(journal, "s1");
    for (const callId of ["c1", "c2", "c3"]) await runCall(journal, "s1", callId);
    journal.sessionClosed({ sessionId: "s1" });
    const lines = await journal.exportSession("s1");
    expect(lines).toHaveLength(2 + 3 * 4 + 1);
    let prevHash = "0".repeat(64);
    for (const line of lines) {
      const { prevHash: linked, hash, ...record } = JSON.parse(line) as { prevHash: string; hash: string };
      expect(linked).toBe(prevHash);
      expect(
        createHash("sha256")
          .update(prevHash + canonicalJson(record))
          .digest("hex"),
      ).toBe(hash);
      prevHash = hash;
    }
    expect(await journal.verify()).toEqual({ ok: true, sessions: 1, records: lines.length });
    expect(await journal.session("s1")).toMatchObject({ records: lines.length, calls: 3, openCalls: 0, closedAt: expect.any(String) });
    expect((await journal.calls("s1")).map((call) => call.outcome)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect((await journal.timeline({ sessionId: "s1", callId: "c2" })).map((record) => record.kind)).toEqual([
      "call_requested",
      "approval_decided",
      "call_started",
      "call_finished",
    ]);
    await journal.close();
  });

  it("A3: verify finds a record altered in the database and names the session and seq", async () => {
    const url = await server.database("altered");
    const journal = await PostgresJournal.open({ connectionString: url });
    openSession(journal, "s1");
    await runCall(journal, "s1", "c1");
    await journal.flush();
    await query(url, "UPDATE frames SET body = replace(body, '\"ok\":true', '\"ok\":false')");
    const report = await journal.verify();
    expect(report.ok).toBe(false);
    expect(report.firstBreak).toMatchObject({ sessionId: "s1", problem: expect.stringContaining("altered record") });
    await journal.close();
  });

  it("A3: a start the host was told about is committed in PostgreSQL first", async () => {
    const url = await server.database("durable");
    const journal = await PostgresJournal.open({ connectionString: url });
    openSession(journal, "s1");
    await runCall(journal, "s1", "c1", false);
    // Read over another connection: the record is committed, not only queued.
    const frames = await query<{ body: string }>(url, "SELECT body FROM frames");
    expect(frames.some((frame) => frame.body.includes('"kind":"call_started"'))).toBe(true);
    journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded", result: {} });
    await journal.close();
  });

  it("A2, M3: approvals are shared by hosts under the same identity rules, and a once approval serves one host", async () => {
    const url = await server.database("approvals");
    const first = await PostgresJournal.open({ connectionString: url });
    const second = await PostgresJournal.open({ connectionString: url });
    const key = { executionIdentity: identity, qualifiedName: "a.b", schemaFingerprint: "sha256:s1" };
    await first.storeApproval(key, { scope: "session", by: "person", who: "ana" });
    expect(await second.findApproval(key)).toMatchObject({ scope: "session", by: "person", who: "ana" });
    // Another schema fingerprint (M3) or identity (A2) inherits nothing.
    expect(await second.findApproval({ ...key, schemaFingerprint: "sha256:s2" })).toBeUndefined();
    expect(await second.findApproval({ ...key, executionIdentity: "owid3:other" })).toBeUndefined();
    const once = { ...key, qualifiedName: "a.once", argsDigest: argumentsDigest({ x: 1 }) };
    await first.storeApproval(once, { scope: "once", by: "person" });
    expect(await second.findApproval({ ...once, argsDigest: argumentsDigest({ x: 2 }) })).toBeUndefined();
    const used = await Promise.all([first.consumeApproval(once), second.consumeApproval(once)]);
    expect(used.filter((record) => record !== undefined)).toHaveLength(1);
    expect(await first.revokeApprovals({ qualifiedName: "a.b" })).toBe(1);
    expect(await second.findApproval(key)).toBeUndefined();
    await expect(first.storeApproval({ ...key, argsDigest: undefined }, { scope: "once", by: "person" })).rejects.toMatchObject({
      code: JOURNAL_ERRORS.INVALID_RECORD,
    });
    await Promise.all([first.close(), second.close()]);
  });

  it("A3: a host whose lease expired writes nothing more, and the host that took its session over marks its open call interrupted", async () => {
    const url = await server.database("lease");
    const stale = await PostgresJournal.open({ connectionString: url, leaseMs: 60_000 });
    openSession(stale, "s1");
    await runCall(stale, "s1", "c1", false);
    // The stale host is paused past its lease: its row says so.
    await query(url, "UPDATE hosts SET lease_until = now() - interval '1 second' WHERE host_id = $1", [stale.hostId]);
    const rescuer = await PostgresJournal.open({ connectionString: url });
    expect(rescuer.recovered).toEqual([{ sessionId: "s1", callId: "c1", turnId: "t1", qualifiedName: "a.b", alias: "a__b", started: true }]);
    stale.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded", result: {} });
    const error = await stale.flush().catch((caught: unknown) => caught);
    expect(OpenWorkerError.hasCode(error, JOURNAL_ERRORS.WRITE_FAILED)).toBe(true);
    expect(OpenWorkerError.hasCode((error as Error).cause, JOURNAL_POSTGRES_ERRORS.LEASE_LOST)).toBe(true);
    const calls = await rescuer.calls("s1");
    expect(calls).toMatchObject([{ callId: "c1", started: true, outcome: "interrupted" }]);
    // The session is the rescuer's now: it continues the chain.
    await runCall(rescuer, "s1", "c2");
    rescuer.sessionClosed({ sessionId: "s1" });
    expect(await rescuer.verify()).toMatchObject({ ok: true, sessions: 1 });
    await Promise.all([stale.close().catch(() => undefined), rescuer.close()]);
  });

  it("A3: a session left open by a host that closed is recovered by the next host that opens", async () => {
    const url = await server.database("released");
    const first = await PostgresJournal.open({ connectionString: url });
    openSession(first, "s1");
    first.callRequested({ sessionId: "s1", turnId: "t1", callId: "c1", alias: "a__b", qualifiedName: "a.b", args: {} });
    await first.close();
    const next = await PostgresJournal.open({ connectionString: url });
    expect(next.recovered).toMatchObject([{ sessionId: "s1", callId: "c1", started: false }]);
    await next.close();
  });

  it("errors: a refused connection is JOURNAL_PG_CONNECT_FAILED and never prints the password", async () => {
    const url = "postgres://ana:hunter2@127.0.0.1:1/journal";
    const error = await PostgresJournal.open({ connectionString: url }).catch((caught: unknown) => caught);
    expect(OpenWorkerError.hasCode(error, JOURNAL_POSTGRES_ERRORS.CONNECT_FAILED)).toBe(true);
    expect(String((error as Error).message)).toContain("postgres://ana:***@127.0.0.1:1/journal");
    expect(JSON.stringify(error)).not.toContain("hunter2");
    expect(String((error as Error).message)).not.toContain("hunter2");
    expect(redactConnectionString("host=db password=hunter2 dbname=j")).toBe("host=db password=*** dbname=j");
  });

  it("errors: a reader of a database without a journal, a bad schema name, a write on a reader, a closed journal", async () => {
    const url = await server.database("empty");
    await expect(PostgresJournal.open({ connectionString: url, readonly: true })).rejects.toMatchObject({ code: JOURNAL_POSTGRES_ERRORS.NOT_A_JOURNAL });
    await expect(PostgresJournal.open({ connectionString: url, schema: "Bad Name" })).rejects.toMatchObject({ code: JOURNAL_POSTGRES_ERRORS.INVALID_OPTION });
    await expect(PostgresJournal.open({ connectionString: url, leaseMs: 10 })).rejects.toMatchObject({ code: JOURNAL_POSTGRES_ERRORS.INVALID_OPTION });
    const writer = await PostgresJournal.open({ connectionString: url });
    const reader = await PostgresJournal.open({ connectionString: url, readonly: true });
    expect(() => reader.sessionOpened({ sessionId: "s", executionIdentity: identity, identityInputs: {}, workspace: "/w" })).toThrow(
      expect.objectContaining({ code: JOURNAL_ERRORS.READ_ONLY }),
    );
    expect(() => writer.callProgress({ sessionId: "nope", callId: "c", event: {} })).toThrow(expect.objectContaining({ code: JOURNAL_ERRORS.UNKNOWN_SESSION }));
    await writer.close();
    expect(() => writer.sessionOpened({ sessionId: "s", executionIdentity: identity, identityInputs: {}, workspace: "/w" })).toThrow(
      expect.objectContaining({ code: JOURNAL_ERRORS.CLOSED }),
    );
    await reader.close();
  });
});
