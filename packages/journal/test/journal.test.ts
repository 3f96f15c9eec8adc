import { existsSync } from "node:fs";
import { canonicalJson, OpenWorkerError } from "@openworker/tools-sdk";
import { sha256Hex } from "@openworker/tools-sdk/internal/validation";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_QUEUED_CHARS } from "../src/write/group-commit.js";
import { argumentsDigest, Journal, JOURNAL_ERRORS, RECORD_KINDS } from "../src/index.js";
import { approve, codeOf, completeCall, openSession, request, startCall, temporaryFolder } from "./helpers.js";

let folder: ReturnType<typeof temporaryFolder>;
let journal: Journal;

beforeEach(() => {
  folder = temporaryFolder();
  journal = Journal.open({ path: folder.file("state/journal.db") });
  openSession(journal, "s1");
});

afterEach(() => {
  journal.close();
  folder.remove();
});

describe("writing records (A3)", () => {
  it("A3 records requested, approved, started, progress and one terminal record, in order, on a verified chain", async () => {
    request(journal, "s1", "c1", { path: "/tmp/a", recursive: true });
    journal.approvalDecided({ sessionId: "s1", callId: "c1", decision: "approved", by: "person", who: "ana", scope: "once", key: "k1" });
    await journal.callStarted({ sessionId: "s1", callId: "c1" });
    journal.callProgress({ sessionId: "s1", callId: "c1", event: { message: "half", fraction: 0.5 } });
    journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "failed", code: "NOT_FOUND", message: "no such file" });

    const timeline = journal.timeline({ sessionId: "s1", callId: "c1" });
    expect(timeline.map((record) => record.kind)).toEqual(["call_requested", "approval_decided", "call_started", "call_progress", "call_finished"]);
    expect(timeline[0]).toMatchObject({ sessionId: "s1", seq: 2, qualifiedName: "demo.run", args: { path: "/tmp/a", recursive: true } });
    expect(timeline[1]).toMatchObject({ decision: "approved", by: "person", who: "ana", scope: "once", key: "k1" });
    expect(timeline[4]).toMatchObject({ outcome: "failed", code: "NOT_FOUND", message: "no such file" });
    for (let index = 1; index < timeline.length; index += 1) expect(timeline[index]!.prevHash).toBe(timeline[index - 1]!.hash);
    expect(journal.calls("s1")).toEqual([
      expect.objectContaining({ callId: "c1", decision: "approved", decidedBy: "person", started: true, outcome: "failed", code: "NOT_FOUND" }),
    ]);
    expect(journal.verify()).toEqual({ ok: true, sessions: 1, records: 6 });
  });

  it("M8 A3 a call's start records the OAuth scopes it runs under, as a list of names; anything else is refused naming the field", async () => {
    request(journal, "s1", "c1", {});
    approve(journal, "s1", "c1");
    await journal.callStarted({ sessionId: "s1", callId: "c1", authorizedScopes: ["notes:read", "notes:write"] });
    expect(journal.timeline({ sessionId: "s1", callId: "c1" })[2]).toMatchObject({ kind: "call_started", authorizedScopes: ["notes:read", "notes:write"] });
    expect(journal.calls("s1")[0]).toMatchObject({ started: true, authorizedScopes: ["notes:read", "notes:write"] });
    request(journal, "s1", "c2", {});
    approve(journal, "s1", "c2");
    for (const bad of ["notes:read", [""], [1]]) {
      const error = await journal.callStarted({ sessionId: "s1", callId: "c2", authorizedScopes: bad as never }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: JOURNAL_ERRORS.INVALID_RECORD, message: expect.stringContaining('field "authorizedScopes"') });
    }
    await journal.callStarted({ sessionId: "s1", callId: "c2" });
    expect(journal.calls("s1")[1]!.authorizedScopes).toBeUndefined();
    expect(journal.verify().ok).toBe(true);
  });

  it("A3 strict: callStarted resolves only once its record is committed: another connection sees it", async () => {
    const strict = Journal.open({ path: folder.file("strict.db"), durability: "strict" });
    try {
      openSession(strict, "s1");
      request(strict, "s1", "c1");
      approve(strict, "s1", "c1");
      const started = strict.callStarted({ sessionId: "s1", callId: "c1" });
      const other = new Database(strict.path, { readonly: true });
      try {
        const count = () => (other.prepare('SELECT count(*) AS n FROM frames WHERE body LIKE \'%"kind":"call_started"%\'').get() as { n: number }).n;
        expect(count()).toBe(0);
        await started;
        expect(count()).toBe(1);
      } finally {
        other.close();
      }
    } finally {
      strict.close();
    }
  });

  it("A3 a caller that never yields gets groups bounded in size too: large records commit long before the group's record count", async () => {
    // 20 progress records of about 300,000 characters in one synchronous run: far below
    // a group's record bound, far above its character bound, so groups commit inline.
    journal.close();
    journal = Journal.open({ path: journal.path });
    await startCall(journal, "s1", "big");
    await journal.flush();
    const event = { blob: "x".repeat(300_000) };
    for (let index = 0; index < 20; index += 1) journal.callProgress({ sessionId: "s1", callId: "big", event: { ...event, index } });
    const reader = Journal.open({ path: journal.path, readonly: true });
    try {
      const progress = [...reader.records("s1")].filter((record) => record.kind === "call_progress").length;
      // Committed before the caller yielded: whole groups of at least MAX_QUEUED_CHARS.
      expect(progress).toBeGreaterThanOrEqual(Math.ceil(MAX_QUEUED_CHARS / 300_100) - 1);
      expect(progress).toBeLessThan(20);
      expect(reader.verify()).toMatchObject({ ok: true });
    } finally {
      reader.close();
    }
    journal.callFinished({ sessionId: "s1", callId: "big", outcome: "succeeded" });
    await journal.flush();
    expect([...journal.records("s1")].filter((record) => record.kind === "call_progress")).toHaveLength(20);
  });

  it("A3 a caller that never yields gets bounded groups: full groups commit at once, each consistent with its head rows", () => {
    // 400 calls (667 records) in one synchronous run: more than a group holds (512), so a
    // group commits inline; every third call stays open. A reader sees only whole commits.
    journal.close();
    journal = Journal.open({ path: journal.path });
    for (let index = 0; index < 400; index += 1) {
      request(journal, "s1", `c${index}`);
      if (index % 3 !== 0) journal.callFinished({ sessionId: "s1", callId: `c${index}`, outcome: "cancelled" });
    }
    const reader = Journal.open({ path: journal.path, readonly: true });
    try {
      const session = reader.session("s1")!;
      expect(session.records).toBeGreaterThanOrEqual(512);
      expect(session.records).toBeLessThan(668);
      expect(reader.verify()).toMatchObject({ ok: true });
      const open = reader.calls("s1").filter((call) => call.outcome === undefined).length;
      expect(session.openCalls).toBe(open);
    } finally {
      reader.close();
    }
  });

  it("A3 grouped: callStarted resolves only once the transaction holding its record (with the call's earlier ones) committed: another connection sees it", async () => {
    request(journal, "s1", "c1");
    approve(journal, "s1", "c1");
    const started = journal.callStarted({ sessionId: "s1", callId: "c1" });
    const other = new Database(journal.path, { readonly: true });
    try {
      const kinds = () => (other.prepare("SELECT coalesce(group_concat(body, char(10)), '') AS text FROM frames").get() as { text: string }).text;
      expect(kinds()).not.toContain('"kind":"call_started"');
      await started;
      for (const kind of ["call_requested", "approval_decided", "call_started"]) expect(kinds()).toContain(`"kind":"${kind}"`);
    } finally {
      other.close();
    }
    // The writer keeps no file beside the journal but SQLite's own.
    expect(existsSync(`${journal.path}-tail`)).toBe(false);
  });

  it("A3 grouped: concurrent starts share one commit, and callers that never wait for I/O still let the event loop turn", async () => {
    const sessions = ["s1", "w2", "w3", "w4"];
    for (const sessionId of sessions.slice(1)) openSession(journal, sessionId);
    await journal.flush();
    const frames = () => (new Database(journal.path, { readonly: true }).prepare("SELECT count(*) AS n FROM frames").get() as { n: number }).n;
    const before = frames();
    // Four writers reach their starts in the same turn of the event loop: one commit holds all four.
    const starts = sessions.map((sessionId) => {
      request(journal, sessionId, "first");
      approve(journal, sessionId, "first");
      return journal.callStarted({ sessionId, callId: "first" });
    });
    await Promise.all(starts);
    expect(frames() - before).toBe(4);
    let turned = false;
    setImmediate(() => (turned = true));
    let calls = 0;
    await Promise.all(
      sessions.map(async (sessionId) => {
        while (!turned && calls < 100_000) {
          calls += 1;
          await completeCall(journal, sessionId, `next-${calls}`);
        }
      }),
    );
    expect(turned).toBe(true);
    expect(calls).toBeLessThan(1_000);
    for (const sessionId of sessions) journal.callFinished({ sessionId, callId: "first", outcome: "succeeded" });
    await journal.flush();
    expect(journal.verify().ok).toBe(true);
  });

  it("A3 concurrent callStarted calls share one group commit and all resolve", async () => {
    for (let index = 0; index < 20; index += 1) {
      request(journal, "s1", `c${index}`);
      approve(journal, "s1", `c${index}`);
    }
    await Promise.all(Array.from({ length: 20 }, (_, index) => journal.callStarted({ sessionId: "s1", callId: `c${index}` })));
    expect(journal.calls("s1").filter((call) => call.started)).toHaveLength(20);
  });

  it("A3 a large group (inserted in multi-row chunks) keeps every record, in chain order, across interleaved sessions", async () => {
    openSession(journal, "s2");
    await journal.flush();
    // 2 sessions × 50 calls × 2 records + 100 started = 300 records in one group: every chunk size and a remainder.
    for (let index = 0; index < 50; index += 1) {
      for (const sessionId of ["s1", "s2"]) {
        request(journal, sessionId, `${sessionId}-c${index}`);
        approve(journal, sessionId, `${sessionId}-c${index}`);
      }
    }
    const started = ["s1", "s2"].flatMap((sessionId) =>
      Array.from({ length: 50 }, (_, index) => journal.callStarted({ sessionId, callId: `${sessionId}-c${index}` })),
    );
    await Promise.all(started);
    for (const sessionId of ["s1", "s2"]) {
      const records = [...journal.records(sessionId)];
      expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 151 }, (_, index) => index + 1));
      expect(records.slice(1, 5).map((record) => record.kind)).toEqual(["call_requested", "approval_decided", "call_requested", "approval_decided"]);
      expect(records.at(-1)).toMatchObject({ kind: "call_started", callId: `${sessionId}-c49` });
    }
    expect(journal.verify()).toMatchObject({ ok: true, records: 302 });
  });

  it("A3 a second terminal record throws JOURNAL_TERMINAL_EXISTS, also after the journal is reopened", async () => {
    await completeCall(journal, "s1", "c1");
    const second = () => journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded" });
    expect(await codeOf(second)).toBe(JOURNAL_ERRORS.TERMINAL_EXISTS);
    expect(await codeOf(() => journal.callProgress({ sessionId: "s1", callId: "c1", event: {} }))).toBe(JOURNAL_ERRORS.TERMINAL_EXISTS);
    journal.close();
    journal = Journal.open({ path: folder.file("state/journal.db") });
    expect(await codeOf(second)).toBe(JOURNAL_ERRORS.TERMINAL_EXISTS);
    expect(journal.timeline({ sessionId: "s1", callId: "c1" }).filter((record) => record.kind === "call_finished")).toHaveLength(1);
  });

  it("A1 a call cannot start without an approval decision; bypass is recorded as one", async () => {
    request(journal, "s1", "c1");
    expect(await codeOf(() => journal.callStarted({ sessionId: "s1", callId: "c1" }))).toBe(JOURNAL_ERRORS.CALL_NOT_APPROVED);
    approve(journal, "s1", "c1", "bypass");
    await journal.callStarted({ sessionId: "s1", callId: "c1" });
    expect(await codeOf(() => journal.callStarted({ sessionId: "s1", callId: "c1" }))).toBe(JOURNAL_ERRORS.CALL_ALREADY_STARTED);
    expect(await codeOf(() => approve(journal, "s1", "c1"))).toBe(JOURNAL_ERRORS.DECISION_EXISTS);
    expect(journal.timeline({ sessionId: "s1", callId: "c1" })[1]).toMatchObject({ kind: "approval_decided", by: "bypass" });
  });

  it("A1 a denied call never starts, has no progress and closes without a terminal record", async () => {
    request(journal, "s1", "c1");
    journal.approvalDecided({
      sessionId: "s1",
      callId: "c1",
      decision: "denied",
      by: "policy",
      who: "read-only",
      scope: "once",
      key: "k",
      reason: "writes are off",
    });
    expect(await codeOf(() => journal.callStarted({ sessionId: "s1", callId: "c1" }))).toBe(JOURNAL_ERRORS.CALL_DENIED);
    expect(await codeOf(() => journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded" }))).toBe(JOURNAL_ERRORS.CALL_DENIED);
    expect(journal.calls("s1")[0]).toMatchObject({ decision: "denied", decidedBy: "policy", started: false });
    expect(journal.calls("s1")[0]!.outcome).toBeUndefined();
    journal.sessionClosed({ sessionId: "s1" });
    expect(journal.verify().ok).toBe(true);
  });

  it("A3 progress needs a started call; call ids are unique within their session, and a call is reached only through it", async () => {
    openSession(journal, "s2");
    request(journal, "s1", "c1");
    expect(await codeOf(() => journal.callProgress({ sessionId: "s1", callId: "c1", event: {} }))).toBe(JOURNAL_ERRORS.CALL_NOT_STARTED);
    expect(await codeOf(() => approve(journal, "s2", "c1"))).toBe(JOURNAL_ERRORS.UNKNOWN_CALL);
    expect(await codeOf(() => approve(journal, "s1", "nope"))).toBe(JOURNAL_ERRORS.UNKNOWN_CALL);
    expect(await codeOf(() => request(journal, "nope", "c9"))).toBe(JOURNAL_ERRORS.UNKNOWN_SESSION);
    expect(await codeOf(() => request(journal, "s1", "c1"))).toBe(JOURNAL_ERRORS.CALL_EXISTS);
    expect(await codeOf(() => openSession(journal, "s1"))).toBe(JOURNAL_ERRORS.SESSION_EXISTS);
    // The same id in another session is another call.
    request(journal, "s2", "c1");
    expect(journal.timeline({ sessionId: "s2", callId: "c1" })).toHaveLength(1);
  });

  it("A3 a reopened journal still refuses a call id its session used before the reopen", async () => {
    await completeCall(journal, "s1", "c1");
    request(journal, "s1", "c2");
    journal.approvalDecided({ sessionId: "s1", callId: "c2", decision: "denied", by: "policy", scope: "once", key: "k" });
    journal.close();
    journal = Journal.open({ path: folder.file("state/journal.db") });
    expect(await codeOf(() => request(journal, "s1", "c1"))).toBe(JOURNAL_ERRORS.CALL_EXISTS);
    expect(await codeOf(() => request(journal, "s1", "c2"))).toBe(JOURNAL_ERRORS.CALL_EXISTS);
    expect(await codeOf(() => journal.callStarted({ sessionId: "s1", callId: "c2" }))).toBe(JOURNAL_ERRORS.CALL_DENIED);
    request(journal, "s1", "c3");
    expect(journal.verify()).toEqual({ ok: true, sessions: 1, records: 8 });
  });

  it("A3 a session with open calls cannot close; a closed session takes no more records", async () => {
    request(journal, "s1", "c1");
    const error = (() => {
      try {
        journal.sessionClosed({ sessionId: "s1" });
      } catch (caught) {
        return caught;
      }
    })();
    expect(OpenWorkerError.hasCode(error, JOURNAL_ERRORS.CALLS_OPEN)).toBe(true);
    expect((error as Error).message).toContain("c1");
    journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "cancelled" });
    journal.turnFinished({ sessionId: "s1", turnId: "t1", completed: false, reason: "cancelled" });
    journal.revoked({ sessionId: "s1", tool: "demo.run", reason: "close" });
    journal.sessionClosed({ sessionId: "s1" });
    expect(await codeOf(() => request(journal, "s1", "c2"))).toBe(JOURNAL_ERRORS.SESSION_CLOSED);
    journal.close();
    journal = Journal.open({ path: folder.file("state/journal.db") });
    expect(await codeOf(() => journal.revoked({ sessionId: "s1", tool: "demo.run", reason: "close" }))).toBe(JOURNAL_ERRORS.SESSION_CLOSED);
    expect(journal.session("s1")).toMatchObject({ records: 6, calls: 1, openCalls: 0 });
    expect(journal.session("s1")?.closedAt).toBeDefined();
  });

  it("E5 refuses an argsDigest that does not match the arguments, and changes nothing", async () => {
    const bad = () =>
      journal.callRequested({
        sessionId: "s1",
        turnId: "t1",
        callId: "c1",
        alias: "a__b",
        qualifiedName: "a.b",
        args: { a: 1 },
        argsDigest: argumentsDigest({ a: 2 }),
      });
    expect(await codeOf(bad)).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    expect(journal.calls("s1")).toEqual([]);
    request(journal, "s1", "c1");
    expect(journal.verify()).toMatchObject({ ok: true, records: 2 });
  });

  it("A3 computes the argsDigest itself when the caller leaves it out", async () => {
    journal.callRequested({ sessionId: "s1", turnId: "t1", callId: "c1", alias: "a__b", qualifiedName: "a.b", args: { b: 1, a: [2] } });
    await journal.flush();
    expect(journal.timeline({ sessionId: "s1", callId: "c1" })[0]).toMatchObject({ kind: "call_requested", argsDigest: argumentsDigest({ a: [2], b: 1 }) });
  });

  it("refuses unknown outcomes, deciders and scopes, and unserializable payloads, leaving the chain intact", async () => {
    request(journal, "s1", "c1");
    expect(
      await codeOf(() => journal.approvalDecided({ sessionId: "s1", callId: "c1", decision: "approved", by: "robot" as never, scope: "once", key: "k" })),
    ).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    expect(
      await codeOf(() => journal.approvalDecided({ sessionId: "s1", callId: "c1", decision: "approved", by: "person", scope: "forever" as never, key: "k" })),
    ).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    approve(journal, "s1", "c1");
    await journal.callStarted({ sessionId: "s1", callId: "c1" });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(await codeOf(() => journal.callProgress({ sessionId: "s1", callId: "c1", event: cyclic as never }))).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    expect(await codeOf(() => journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "done" as never }))).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    expect(await codeOf(() => openSession(journal, ""))).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    journal.callFinished({
      sessionId: "s1",
      callId: "c1",
      outcome: "limit_exceeded",
      code: "RESULT_TOO_LARGE",
      breach: { limit: "resultBytes", actual: 300000, max: 262144 },
    });
    expect(journal.verify()).toMatchObject({ ok: true, records: 5 });
  });

  it("T4 stores image digests and refuses image bytes in their place", async () => {
    request(journal, "s1", "c1");
    approve(journal, "s1", "c1");
    await journal.callStarted({ sessionId: "s1", callId: "c1" });
    const base64 = Buffer.from("\x89PNG fake image bytes that are not a digest").toString("base64");
    const refused = () => journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded", imageDigests: [base64] });
    expect(await codeOf(refused)).toBe(JOURNAL_ERRORS.IMAGE_NOT_DIGEST);
    const digest = `sha256:${sha256Hex(new Uint8Array([1, 2, 3]))}`;
    journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded", result: { shown: 1 }, imageDigests: [digest] });
    expect(journal.timeline({ sessionId: "s1", callId: "c1" }).at(-1)).toMatchObject({ imageDigests: [digest] });
    expect([...journal.exportSession("s1")].join("\n")).not.toContain(base64);
  });

  it("L2 has no record kind and no method for model-context facts", () => {
    expect(RECORD_KINDS.filter((kind) => /context|fact/i.test(kind))).toEqual([]);
    const methods = Object.getOwnPropertyNames(Journal.prototype);
    expect(methods.filter((name) => /context|fact/i.test(name))).toEqual([]);
  });

  it("writes to a closed or read-only journal are refused; close is idempotent", async () => {
    const reader = Journal.open({ path: journal.path, readonly: true });
    expect(reader.recovered).toEqual([]);
    expect(await codeOf(() => openSession(reader, "s9"))).toBe(JOURNAL_ERRORS.READ_ONLY);
    reader.close();
    reader.close();
    expect(await codeOf(() => reader.sessions())).toBe(JOURNAL_ERRORS.CLOSED);
    journal.close();
    expect(await codeOf(() => request(journal, "s1", "c1"))).toBe(JOURNAL_ERRORS.CLOSED);
    journal = Journal.open({ path: folder.file("state/journal.db") });
  });

  it("queued records reach the file on close without a flush", () => {
    request(journal, "s1", "c1");
    journal.close();
    const reader = Journal.open({ path: folder.file("state/journal.db"), readonly: true });
    expect(reader.calls("s1").map((call) => call.callId)).toEqual(["c1"]);
    reader.close();
    journal = Journal.open({ path: folder.file("state/journal.db") });
  });
});

describe("reading", () => {
  it("A3 exports a session as JSON lines an auditor can re-hash without this package", async () => {
    for (let index = 0; index < 400; index += 1) await completeCall(journal, "s1", `c${index}`);
    journal.turnFinished({ sessionId: "s1", turnId: "t1", completed: true });
    const lines = [...journal.exportSession("s1")];
    expect(lines).toHaveLength(1 + 400 * 4 + 1);
    let previous = "0".repeat(64);
    for (const line of lines) {
      const { hash, prevHash, ...content } = JSON.parse(line) as Record<string, unknown>;
      expect(prevHash).toBe(previous);
      expect(sha256Hex(String(prevHash) + canonicalJson(content))).toBe(hash);
      previous = String(hash);
    }
    expect([...journal.exportSession("missing")]).toEqual([]);
  });

  it("lists sessions with their counts, and a call's timeline only holds that call", async () => {
    openSession(journal, "s2", "owid3:other");
    await completeCall(journal, "s1", "a");
    await completeCall(journal, "s2", "b");
    request(journal, "s1", "open");
    expect(journal.sessions().map((session) => [session.sessionId, session.executionIdentity, session.records, session.calls, session.openCalls])).toEqual([
      ["s1", "owid3:test", 6, 2, 1],
      ["s2", "owid3:other", 5, 1, 0],
    ]);
    expect(journal.timeline({ sessionId: "s2", callId: "b" }).every((record) => "callId" in record && record.callId === "b")).toBe(true);
    expect(journal.timeline({ sessionId: "s1", callId: "unknown" })).toEqual([]);
    expect(journal.session("unknown")).toBeUndefined();
    expect(journal.calls("s1").find((call) => call.callId === "open")).toMatchObject({ started: false });
  });
});
