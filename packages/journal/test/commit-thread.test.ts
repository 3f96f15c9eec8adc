import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { JsonValue } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import { MAX_IN_FLIGHT_CHARS, MAX_QUEUED_CHARS, MAX_QUEUED_LINES_ON_THREAD } from "../src/group-commit.js";
import { Journal, JOURNAL_ERRORS } from "../src/index.js";
import { approve, codeOf, completeCall, openSession, request, startCall, temporaryFolderPerTest } from "./helpers.js";

const folder = temporaryFolderPerTest();

/** Runs `calls` complete calls in each of `sessions` concurrent sessions. */
async function load(journal: Journal, sessions: number, calls: number, prefix = "s"): Promise<void> {
  for (let index = 0; index < sessions; index += 1) openSession(journal, `${prefix}${index}`);
  await Promise.all(
    Array.from({ length: sessions }, async (_, index) => {
      for (let call = 0; call < calls; call += 1) await completeCall(journal, `${prefix}${index}`, `c${call}`);
    }),
  );
}

/**
 * The journal's group commit, for the tests that look at (or act as) its commit thread:
 * `T` names the members a test uses.
 */
function groupCommitOf<T>(journal: Journal): T {
  return (journal as unknown as { writer: { commit: T } }).writer.commit;
}

/** A script holding a journal file's SQLite write lock for 3.5 s (argument: the file); prints a line once it holds it. */
const LOCK_HOLDER = `
const Database = require("better-sqlite3");
const db = new Database(process.argv[1]);
db.exec("BEGIN IMMEDIATE");
process.stdout.write("locked\\n");
setTimeout(() => { db.exec("COMMIT"); db.close(); }, 3500);
`;

describe("commit thread (A3)", () => {
  it("A3 always: group commits run on the commit thread; everything is committed, chained and readable", async () => {
    const file = folder.file("thread/journal.db");
    const journal = Journal.open({ path: file, commitThread: "always" });
    expect(journal.commits).toBe("thread");
    await load(journal, 8, 40);
    await journal.flush();
    // Another connection sees every record once flush resolved: the thread committed them.
    const reader = Journal.open({ path: file, readonly: true });
    try {
      expect(reader.sessions()).toHaveLength(8);
      expect(reader.calls("s3").filter((call) => call.outcome === "succeeded")).toHaveLength(40);
      expect(reader.verify()).toEqual({ ok: true, sessions: 8, records: 8 * (1 + 40 * 4) });
    } finally {
      reader.close();
    }
    journal.sessionClosed({ sessionId: "s0" });
    journal.close();
    for (const suffix of ["-tail", "-tail.1", "-wal"]) expect(existsSync(`${file}${suffix}`), suffix).toBe(false);
    const again = Journal.open({ path: file });
    expect(again.recovered).toEqual([]);
    expect(again.session("s0")).toMatchObject({ closedAt: expect.any(String), records: 1 + 40 * 4 + 1, calls: 40, openCalls: 0 });
    expect(again.verify().ok).toBe(true);
    again.close();
  });

  it("A3 always: groups the thread reads back in pieces (long session ids, a record larger than a piece, non-ASCII) are stored exactly", async () => {
    const file = folder.file("pieces.db");
    const journal = Journal.open({ path: file, commitThread: "always" });
    const sessions = Array.from({ length: 16 }, (_, index) => `ses_0f8a6b7e-5a4c-4c0e-9a55-1f2e3d4c5b6a-${index}`);
    const big = `${"état € 😀 ".repeat(9_000)}end`; // about 140 KB of UTF-8
    try {
      for (const sessionId of sessions) openSession(journal, sessionId);
      await Promise.all(
        sessions.map(async (sessionId, index) => {
          for (let call = 0; call < 30; call += 1) {
            request(journal, sessionId, `c${call}`);
            approve(journal, sessionId, `c${call}`);
            await journal.callStarted({ sessionId, callId: `c${call}` });
            const result: JsonValue = index === 3 && call === 7 ? { text: big } : { call, note: "ünïcödé" };
            journal.callFinished({ sessionId, callId: `c${call}`, outcome: "succeeded", result });
          }
        }),
      );
      await journal.flush();
      expect(journal.verify()).toEqual({ ok: true, sessions: 16, records: 16 * (1 + 30 * 4) });
      const finished = journal.timeline({ sessionId: sessions[3]!, callId: "c7" }).filter((record) => record.kind === "call_finished");
      expect(finished).toEqual([expect.objectContaining({ result: { text: big } })]);
    } finally {
      journal.close();
    }
  });

  it.each([
    ["grouped", "never"],
    ["grouped", "always"],
    ["strict", "always"],
  ] as const)(
    "A3 a busy session's group is stored as several linked frames of at most 64 K characters (%s, %s), read back whole, also after a reopen",
    async (durability, commitThread) => {
      const file = folder.file(`busy-${durability}-${commitThread}.db`);
      const journal = Journal.open({ path: file, durability, commitThread });
      openSession(journal, "busy");
      // 32 calls in flight on one session: one group of ~500 lines of ~300 characters.
      await Promise.all(Array.from({ length: 32 }, (_, lane) => (async () => {
        for (let call = 0; call < 4; call += 1) {
          const callId = `l${lane}c${call}`;
          request(journal, "busy", callId, { lane, call, pad: "p".repeat(120) });
          approve(journal, "busy", callId);
          await journal.callStarted({ sessionId: "busy", callId });
          journal.callFinished({ sessionId: "busy", callId, outcome: "succeeded", result: { lane, call } });
        }
      })()));
      await journal.flush();
      journal.close();
      const probe = new Database(file, { readonly: true });
      const frames = probe.prepare("SELECT id, first_seq AS firstSeq, length(body) AS chars FROM frames ORDER BY id").all() as { id: number; firstSeq: number; chars: number }[];
      probe.close();
      expect(frames.length).toBeGreaterThan(2);
      expect(Math.max(...frames.map((frame) => frame.chars))).toBeLessThan(64 * 1024 + 2_000);
      const again = Journal.open({ path: file, durability, commitThread });
      try {
        expect(again.verify()).toEqual({ ok: true, sessions: 1, records: 1 + 32 * 4 * 4 });
        expect(again.calls("busy").filter((call) => call.outcome === "succeeded")).toHaveLength(128);
        expect(again.timeline({ sessionId: "busy", callId: "l31c3" }).map((record) => record.kind)).toEqual([
          "call_requested",
          "approval_decided",
          "call_started",
          "call_finished",
        ]);
        // The chain goes on from the last frame.
        await completeCall(again, "busy", "after");
        await again.flush();
        expect(again.verify().ok).toBe(true);
      } finally {
        again.close();
      }
    },
  );

  it("A3 auto: commits start on the writer's thread and move to the commit thread once the writer is busy", async () => {
    // A low share makes "busy" certain under any machine load (the default fifth could stay
    // out of reach for 20 s on a saturated CI machine); the switch itself is what is tested.
    const journal = Journal.open({ path: folder.file("auto.db"), commitThreadShare: 0.02 });
    try {
      openSession(journal, "quiet");
      await completeCall(journal, "quiet", "c0");
      await journal.flush();
      expect(journal.commits).toBe("inline");
      // Load until the thread starts: about 20 rounds (half a second) here; a machine busy
      // with other test files can stretch the 100 ms windows the decision needs.
      const deadline = performance.now() + 20_000;
      for (let round = 0; journal.commits !== "thread" && performance.now() < deadline; round += 1) await load(journal, 32, 20, `r${round}-`);
      expect(journal.commits).toBe("thread");
      await journal.flush();
      expect(journal.verify().ok).toBe(true);
    } finally {
      journal.close();
    }
  });

  it("commitThreadShare must be above 0 and at most 1: JOURNAL_OPEN_FAILED, and no lock is left", async () => {
    for (const commitThreadShare of [0, -1, 1.5, Number.NaN]) {
      expect(await codeOf(() => Journal.open({ path: folder.file("share.db"), commitThreadShare }))).toBe("JOURNAL_OPEN_FAILED");
    }
    Journal.open({ path: folder.file("share.db") }).close();
  });

  it("A3 auto: large groups at a modest rate (a busy event loop, as with MCP calls in flight) leave commits on the writer's thread", async () => {
    const journal = Journal.open({ path: folder.file("modest.db") });
    try {
      openSession(journal, "s1");
      // 160-record groups (past the 128 that used to start it) every 60 ms: their commits
      // take a few percent of the time, far from a fifth even on a slow machine.
      for (let round = 0; round < 15; round += 1) {
        for (let turn = 0; turn < 160; turn += 1) {
          journal.turnPrepared({ sessionId: "s1", turnId: `${round}.${turn}`, selectionFingerprint: "sha256:s", catalogFingerprints: {} });
        }
        await journal.flush();
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
      expect(journal.commits).toBe("inline");
      expect(journal.verify().ok).toBe(true);
    } finally {
      journal.close();
    }
  });

  it("A3 auto: a writer whose event loop has time to spare keeps commits on its thread, however large their share of its time", async () => {
    // The share is set so low that every window reaches it; what keeps the thread off is
    // the loop, idle about half the time (as it waits on an MCP server): the thread would
    // add hand-overs there and take nothing off what limits the rate. Rounds are small, so
    // that every 100 ms window holds several of them and their idle halves, even on a
    // machine slow enough to stretch a round many times over.
    const journal = Journal.open({ path: folder.file("idle-loop.db"), commitThreadShare: 0.01 });
    try {
      const until = performance.now() + 1_500;
      for (let round = 0; performance.now() < until; round += 1) {
        const started = performance.now();
        await load(journal, 4, 4, `r${round}-`);
        await journal.flush();
        // As long again with nothing to do, whatever the machine's speed.
        await new Promise((resolve) => setTimeout(resolve, Math.max(2, performance.now() - started)));
      }
      expect(journal.commits).toBe("inline");
      expect(journal.verify().ok).toBe(true);
    } finally {
      journal.close();
    }
  });

  it("A3 the writer's own reads, approvals and reloaded sessions see what is on its way to the thread", async () => {
    const file = folder.file("reads.db");
    const first = Journal.open({ path: file, commitThread: "always" });
    openSession(first, "s1");
    await completeCall(first, "s1", "old");
    first.close();

    const journal = Journal.open({ path: file, commitThread: "always" });
    try {
      // A reloaded session: its earlier call ids are read from its frames, after what is
      // queued or on its way is committed.
      // More records than a group on the thread holds: the full group is posted at once,
      // and the session's head frame is on its way to the thread when the id check reads the frames.
      for (let turn = 0; turn < MAX_QUEUED_LINES_ON_THREAD + 88; turn += 1) {
        journal.turnPrepared({ sessionId: "s1", turnId: `t${turn}`, selectionFingerprint: "sha256:s", catalogFingerprints: {} });
      }
      expect(await codeOf(() => request(journal, "s1", "old"))).toBe(JOURNAL_ERRORS.CALL_EXISTS);
      request(journal, "s1", "new");
      approve(journal, "s1", "new");
      // Reads commit first and wait for the thread.
      expect(journal.calls("s1").map((call) => call.callId)).toEqual(["old", "new"]);
      const key = { executionIdentity: "owid3:test", qualifiedName: "demo.run", schemaFingerprint: "sha256:f" };
      journal.storeApproval(key, { scope: "session", by: "person" });
      expect(journal.findApproval(key)).toMatchObject({ scope: "session" });
      await journal.callStarted({ sessionId: "s1", callId: "new" });
      journal.callFinished({ sessionId: "s1", callId: "new", outcome: "succeeded", result: { ok: true } });
      journal.sessionClosed({ sessionId: "s1" });
      await journal.flush();
      // The closed session was forgotten once its close was committed; it reads as closed.
      expect(await codeOf(() => journal.turnFinished({ sessionId: "s1", turnId: "t1", completed: true }))).toBe(JOURNAL_ERRORS.SESSION_CLOSED);
      expect(journal.verify().ok).toBe(true);
    } finally {
      journal.close();
    }
  });

  it("A3 a caller that never yields gets bounded groups on the commit thread too: a full group goes to the thread at once", async () => {
    const file = folder.file("bounded-on-thread.db");
    const journal = Journal.open({ path: file, commitThread: "always" });
    type Commit = { thread: { waitFor(n: number, ms: number): boolean }; posted: number };
    const commit = groupCommitOf<Commit>(journal);
    try {
      openSession(journal, "s1");
      await journal.flush();
      // One synchronous run: one full group (MAX_QUEUED_LINES_ON_THREAD records, not
      // several of the writer's own 512) is posted; the rest waits for the timer.
      const total = MAX_QUEUED_LINES_ON_THREAD + 600;
      for (let turn = 0; turn < total; turn += 1) {
        journal.turnPrepared({ sessionId: "s1", turnId: `t${turn}`, selectionFingerprint: "sha256:s", catalogFingerprints: {} });
      }
      expect(commit.thread.waitFor(commit.posted, 10_000)).toBe(true);
      const reader = Journal.open({ path: file, readonly: true });
      try {
        expect(reader.session("s1")!.records).toBe(1 + MAX_QUEUED_LINES_ON_THREAD);
      } finally {
        reader.close();
      }
      await journal.flush();
      expect(journal.session("s1")!.records).toBe(1 + total);
      expect(journal.verify().ok).toBe(true);
    } finally {
      journal.close();
    }
  });

  it("A3 records on their way to a commit thread that is held up are bounded in characters too: the writer waits for the oldest group instead of piling up large records", async () => {
    const file = folder.file("in-flight-chars.db");
    const journal = Journal.open({ path: file, commitThread: "always" });
    type Commit = { thread: { post(...args: unknown[]): void }; charsInFlight: number };
    const commit = groupCommitOf<Commit>(journal);
    let holder: ReturnType<typeof spawn> | undefined;
    try {
      openSession(journal, "s1");
      await startCall(journal, "s1", "big");
      await journal.flush();
      // Another process holds the file's write lock for 3.5 s: the thread commits nothing
      // meanwhile (its busy timeout is 5 s), so whatever the writer posts stays on its way
      // (writing the 80 MB below takes well under a second here).
      holder = spawn(process.execPath, ["-e", LOCK_HOLDER, file], { cwd: path.resolve(import.meta.dirname, ".."), stdio: ["ignore", "pipe", "inherit"] });
      await new Promise<void>((resolve, reject) => {
        holder!.stdout!.once("data", () => resolve());
        holder!.once("exit", (code) => reject(new Error(`the lock holder exited (${code}) before locking`)));
      });
      let most = 0;
      const post = commit.thread.post.bind(commit.thread);
      commit.thread.post = (...args: unknown[]) => {
        most = Math.max(most, commit.charsInFlight);
        post(...args);
      };
      // 80 records of about 1,000,000 characters: past MAX_IN_FLIGHT_CHARS, far below the record bound.
      const blob = "x".repeat(1_000_000);
      for (let index = 0; index < 80; index += 1) journal.callProgress({ sessionId: "s1", callId: "big", event: { blob, index } });
      most = Math.max(most, commit.charsInFlight);
      expect(most).toBeLessThanOrEqual(MAX_IN_FLIGHT_CHARS);
      // It was reached: the writer waited for the thread (a group is at most MAX_QUEUED_CHARS and one record more).
      expect(most).toBeGreaterThan(MAX_IN_FLIGHT_CHARS - 2 * (MAX_QUEUED_CHARS + 1_000_100));
      journal.callFinished({ sessionId: "s1", callId: "big", outcome: "succeeded" });
      await journal.flush();
      // Requested, approved, started, 80 progress, finished.
      expect(journal.session("s1")).toMatchObject({ records: 1 + 3 + 80 + 1 });
      expect(journal.verify().ok).toBe(true);
    } finally {
      journal.close();
      if (holder !== undefined && holder.exitCode === null) await new Promise((resolve) => holder!.once("exit", resolve));
    }
  }, 60_000);

  it("A3 with the commit thread, records are hashed there: the writer queues them bare, and every chain verifies, across reopens and closes", async () => {
    const file = folder.file("hashing.db");
    const journal = Journal.open({ path: file, commitThread: "always" });
    await load(journal, 4, 0);
    await journal.flush(); // the thread's first group: from now on the writer hashes nothing
    await Promise.all(
      Array.from({ length: 4 }, async (_, index) => {
        for (let call = 0; call < 20; call += 1) await completeCall(journal, `s${index}`, `c${call}`);
      }),
    );
    await journal.flush();
    // The tail log holds the records bare (canonical JSON, no hash in front).
    const tailLines = readFileSync(`${file}-tail`, "utf8").split("\n");
    expect(tailLines.filter((line) => line.startsWith("{"))).toHaveLength(4 * 20 * 4);
    expect(journal.verify()).toEqual({ ok: true, sessions: 4, records: 4 * (1 + 20 * 4) });
    // Stored as frame lines, hashed onto their chains.
    const records = [...journal.records("s2")];
    expect(records.at(-1)).toMatchObject({ seq: 81, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    journal.sessionClosed({ sessionId: "s2" });
    journal.close();
    const again = Journal.open({ path: file, commitThread: "always" });
    try {
      // Sessions the thread never saw (reloaded from the file) continue their chains.
      await completeCall(again, "s1", "later");
      again.sessionClosed({ sessionId: "s1" });
      await again.flush();
      expect(again.session("s2")).toMatchObject({ records: 82, closedAt: expect.any(String) });
      expect(again.verify()).toEqual({ ok: true, sessions: 4, records: 4 * 81 + 1 + 4 + 1 });
    } finally {
      again.close();
    }
  });

  it("A3 a commit thread that stops with records queued bare: the writer hashes them onto the heads the file holds, and commits go on", async () => {
    const file = folder.file("stopped.db");
    const journal = Journal.open({ path: file, commitThread: "always" });
    try {
      await load(journal, 2, 3);
      await journal.flush();
      request(journal, "s0", "bare");
      approve(journal, "s0", "bare");
      // As the thread's exit event does (an unexpected exit, nothing on its way).
      const commit = groupCommitOf<{ thread: { exited: boolean }; settle(): void }>(journal);
      commit.thread.exited = true;
      commit.settle();
      expect(journal.commits).toBe("inline");
      await journal.callStarted({ sessionId: "s0", callId: "bare" });
      journal.callFinished({ sessionId: "s0", callId: "bare", outcome: "succeeded" });
      await completeCall(journal, "s1", "after");
      await journal.flush();
      expect(journal.verify()).toEqual({ ok: true, sessions: 2, records: 2 * (1 + 3 * 4) + 2 * 4 });
      expect(journal.calls("s0").map((call) => [call.callId, call.outcome])).toContainEqual(["bare", "succeeded"]);
    } finally {
      journal.close();
    }
  });

  it("A3 a commit thread that stops between groups: a session opened bare in the queued group, and a line queued right after a full group's commit, are hashed and kept", async () => {
    const file = folder.file("stopped-edges.db");
    const journal = Journal.open({ path: file, commitThread: "always" });
    type Commit = { thread: { exited: boolean; waitFor(n: number, ms: number): boolean }; posted: number; settle(): void };
    const commit = groupCommitOf<Commit>(journal);
    try {
      openSession(journal, "S");
      openSession(journal, "T");
      await completeCall(journal, "S", "c0");
      request(journal, "T", "t");
      approve(journal, "T", "t");
      await journal.callStarted({ sessionId: "T", callId: "t" });
      await journal.flush(); // the thread took a group: records are queued bare from now on
      // S's line, then T's progress up to a full group: S's next line commits that group
      // first, and is queued bare in the next one.
      journal.turnFinished({ sessionId: "S", turnId: "t1", completed: true });
      for (let index = 0; index < MAX_QUEUED_LINES_ON_THREAD - 1; index += 1) journal.callProgress({ sessionId: "T", callId: "t", event: { progress: index } });
      journal.turnFinished({ sessionId: "S", turnId: "t2", completed: true });
      // A session opened in the queued group has no head row in the file yet.
      openSession(journal, "N");
      request(journal, "N", "n1");
      approve(journal, "N", "n1");
      expect(commit.thread.waitFor(commit.posted, 10_000)).toBe(true);
      // As the thread's exit event does (an unexpected exit, nothing on its way).
      commit.thread.exited = true;
      commit.settle();
      expect(journal.commits).toBe("inline");
      await journal.callStarted({ sessionId: "N", callId: "n1" });
      journal.callFinished({ sessionId: "N", callId: "n1", outcome: "succeeded" });
      journal.callFinished({ sessionId: "T", callId: "t", outcome: "succeeded" });
      // S gets nothing more before this commit: its bare line is hashed by the commit alone.
      await journal.flush();
      expect(journal.verify()).toMatchObject({ ok: true, sessions: 3 });
      expect(journal.calls("N").map((call) => [call.callId, call.outcome])).toEqual([["n1", "succeeded"]]);
      journal.sessionClosed({ sessionId: "S" });
    } finally {
      journal.close();
    }
    const again = Journal.open({ path: file });
    try {
      expect(again.warnings).toEqual([]);
      expect(again.verify()).toEqual({ ok: true, sessions: 3, records: 1 + 4 + 2 + 1 + 1 + 3 + (MAX_QUEUED_LINES_ON_THREAD - 1) + 1 + 1 + 4 });
      expect(again.session("S")).toMatchObject({ closedAt: expect.any(String), records: 8 });
    } finally {
      again.close();
    }
  });

  it("A3 a host that changes its working folder after opening a journal by a relative path: the threads started later still write that journal", async () => {
    const here = process.cwd();
    const ours = path.dirname(folder.file("ours/j.db"));
    const theirs = path.dirname(folder.file("theirs/j.db"));
    mkdirSync(ours, { recursive: true });
    mkdirSync(theirs, { recursive: true });
    try {
      // Another host's journal, under the same relative name in the folder ours moves to.
      process.chdir(theirs);
      const other = Journal.open({ path: "j.db", commitThread: "never" });
      openSession(other, "other-host");
      other.close();
      process.chdir(ours);
      const journal = Journal.open({ path: "j.db", commitThread: "auto", commitThreadShare: 0.01 });
      process.chdir(theirs);
      try {
        // Until "auto" starts the commit thread (after this chdir), and it has committed groups.
        for (let index = 0; journal.commits !== "thread" || index % 40 !== 0; index += 1) {
          if (index > 200_000) throw new Error("the commit thread never started");
          if (index % 40 === 0) openSession(journal, `s${index}`);
          await completeCall(journal, `s${index - (index % 40)}`, `c${index}`);
        }
        await journal.flush();
      } finally {
        journal.close();
      }
    } finally {
      process.chdir(here);
    }
    const mine = Journal.open({ path: path.join(ours, "j.db"), readonly: true });
    const other = Journal.open({ path: path.join(theirs, "j.db"), readonly: true });
    try {
      expect(mine.verify().ok).toBe(true);
      expect(mine.sessions().length).toBeGreaterThan(1);
      expect(other.sessions().map((session) => session.sessionId)).toEqual(["other-host"]);
    } finally {
      mine.close();
      other.close();
    }
  });

  it.each(["always", "never"] as const)("A3 commitThread %s: a checkpoint thread copies the -wal into the database every few megabytes, and closes with the journal", async (commitThread) => {
    const file = folder.file("checkpoints.db");
    const journal = Journal.open({ path: file, commitThread });
    openSession(journal, "s1");
    const before = statSync(file).size;
    const text = "x".repeat(100_000);
    for (let call = 0; call < 120; call += 1) {
      request(journal, "s1", `c${call}`);
      approve(journal, "s1", `c${call}`);
      await journal.callStarted({ sessionId: "s1", callId: `c${call}` });
      journal.callFinished({ sessionId: "s1", callId: `c${call}`, outcome: "succeeded", result: { text } });
      if (call % 10 === 9) await journal.flush();
    }
    // 12 MB committed, well under the commit connection's own checkpoint (2,500 pages, 40
    // MB): only the checkpoint thread copies pages into the database file by now. It runs
    // beside the writer, so the test waits for it (bounded by the test's timeout).
    while (statSync(file).size < before + 4_000_000) await new Promise((resolve) => setTimeout(resolve, 10));
    journal.close();
    for (const suffix of ["-tail", "-tail.1", "-wal"]) expect(existsSync(`${file}${suffix}`), suffix).toBe(false);
    const again = Journal.open({ path: file });
    expect(again.verify()).toEqual({ ok: true, sessions: 1, records: 1 + 120 * 4 });
    again.close();
  });

  it("A3 a commit that fails on the thread fails the journal (JOURNAL_WRITE_FAILED); reopening replays the tail log and loses no acknowledged start", async () => {
    const file = folder.file("failing.db");
    const journal = Journal.open({ path: file, commitThread: "always" });
    openSession(journal, "s1");
    await journal.flush();
    // Another connection takes the frame id the next group will use: its insert fails.
    const saboteur = new Database(file);
    const next = (saboteur.prepare("SELECT max(id) AS id FROM frames").get() as { id: number }).id + 1;
    saboteur.prepare("INSERT INTO frames (id, session_ref, first_seq, prev_frame, body) VALUES (?, 999, 1, NULL, 'x')").run(next);
    request(journal, "s1", "c1");
    approve(journal, "s1", "c1");
    await journal.callStarted({ sessionId: "s1", callId: "c1" }); // durable in the tail log
    await expect(journal.flush()).rejects.toMatchObject({ code: JOURNAL_ERRORS.WRITE_FAILED, message: expect.stringContaining("UNIQUE constraint failed") });
    expect(await codeOf(() => journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded" }))).toBe(JOURNAL_ERRORS.WRITE_FAILED);
    expect(await codeOf(() => journal.close())).toBe(JOURNAL_ERRORS.WRITE_FAILED);
    expect(existsSync(`${file}-tail`)).toBe(true); // kept for the next open
    saboteur.prepare("DELETE FROM frames WHERE id = ?").run(next);
    saboteur.close();

    const reopened = Journal.open({ path: file, commitThread: "always" });
    try {
      expect(reopened.recovered).toEqual([
        { sessionId: "s1", callId: "c1", turnId: "t1", qualifiedName: "demo.run", alias: "demo__run", started: true },
      ]);
      expect(reopened.verify()).toMatchObject({ ok: true });
    } finally {
      reopened.close();
    }
  });

  it("A3 a bundle without the worker file: \"always\" refuses to open with a coded error, \"auto\" commits on the writer's thread", () => {
    const dist = path.resolve(import.meta.dirname, "../dist");
    expect(existsSync(path.join(dist, "index.js")), "build the package first").toBe(true);
    // The built journal without journal-commit-worker.js, inside the package (so its
    // dependencies resolve) but away from dist/.
    const bundle = mkdtempSync(path.join(import.meta.dirname, "../.no-worker-"));
    const code = path.join(bundle, "code");
    try {
      cpSync(dist, code, { recursive: true, filter: (source) => !path.basename(source).startsWith("journal-commit-worker") });
      expect(readdirSync(code).some((name) => name.startsWith("journal-commit-worker"))).toBe(false);
      // "always" first; then "auto" under enough load to start the thread (commits of
      // 320-record groups back to back until it starts, 3 s at most), as the same script
      // shows against dist/.
      const script = (dir: string, name: string) => `
        import { existsSync } from "node:fs";
        import { Journal } from ${JSON.stringify(path.join(dir, "index.js"))};
        const file = ${JSON.stringify(folder.file(name))};
        let refused;
        try { Journal.open({ path: file, commitThread: "always" }).close(); } catch (error) { refused = { code: error.code, message: error.message }; }
        const tailAfterRefusal = existsSync(file + "-tail") || existsSync(file + "-tail.1") || existsSync(file + "-lock");
        const journal = Journal.open({ path: file });
        for (let s = 0; s < 32; s += 1) journal.sessionOpened({ sessionId: "s" + s, executionIdentity: "owid3:t", identityInputs: {}, workspace: "/w" });
        // Until the thread starts (its decision needs two busy 100 ms windows of three; a
        // busy machine can stretch that), for at most 3 s: the no-worker bundle never starts it.
        const until = performance.now() + 3000;
        let rounds = 0;
        for (; (journal.commits === "inline" && performance.now() < until) || rounds < 10; rounds += 1) {
          for (let s = 0; s < 32; s += 1) for (let t = 0; t < 10; t += 1) journal.turnPrepared({ sessionId: "s" + s, turnId: rounds + "." + t, selectionFingerprint: "sha256:x", catalogFingerprints: {} });
          await journal.flush();
        }
        const commits = journal.commits;
        const verified = journal.verify();
        journal.close();
        console.log(JSON.stringify({ refused, tailAfterRefusal, commits, verified, records: 32 * (1 + 10 * rounds) }));
      `;
      type Output = { refused?: { code: string; message: string }; tailAfterRefusal: boolean; commits: string; verified: { ok: boolean; records: number }; records: number };
      const run = (dir: string, name: string) =>
        JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script(dir, name)], { encoding: "utf8" })) as Output;
      const output = run(code, "bundle.db");
      expect(output.refused?.code).toBe(JOURNAL_ERRORS.OPEN_FAILED);
      expect(output.refused?.message).toContain("journal-commit-worker.js");
      expect(output.tailAfterRefusal).toBe(false); // the refused open left no tail log (nor lock) behind
      expect(output.commits).toBe("inline");
      expect(output.verified).toMatchObject({ ok: true, records: output.records });
      const withWorker = run(dist, "dist.db");
      expect(withWorker.refused).toBeUndefined();
      expect(withWorker.commits).not.toBe("inline");
      expect(withWorker.verified).toMatchObject({ ok: true, records: withWorker.records });
    } finally {
      rmSync(bundle, { recursive: true, force: true });
    }
  });

  it("refuses an unknown commitThread setting with a coded error naming the field", () => {
    const error = (() => {
      try {
        Journal.open({ path: folder.file("bad.db"), commitThread: "sometimes" as never });
      } catch (caught) {
        return caught as { code: string; message: string };
      }
      return undefined;
    })();
    expect(error?.code).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    expect(error?.message).toContain("commitThread");
    expect(existsSync(folder.file("bad.db"))).toBe(false);
  });
});
