import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Journal } from "../src/index.js";
import { approve, completeCall, openSession, request, runUntilKilled, temporaryFolderPerTest } from "./helpers.js";

const child = path.resolve(import.meta.dirname, "fixtures/writer-child.mjs");
const dist = path.resolve(import.meta.dirname, "../dist/index.js");

const folder = temporaryFolderPerTest();

describe("recovery (A3, E4)", () => {
  it("A3 marks every call left open as interrupted, reports it, and replays nothing", async () => {
    const file = folder.file("journal.db");
    const journal = Journal.open({ path: file });
    openSession(journal, "s1");
    await completeCall(journal, "s1", "done");
    request(journal, "s1", "waiting");
    request(journal, "s1", "approved");
    approve(journal, "s1", "approved");
    request(journal, "s1", "running");
    approve(journal, "s1", "running");
    await journal.callStarted({ sessionId: "s1", callId: "running" });
    journal.callProgress({ sessionId: "s1", callId: "running", event: { step: 1 } });
    request(journal, "s1", "denied");
    journal.approvalDecided({ sessionId: "s1", callId: "denied", decision: "denied", by: "person", scope: "once", key: "k" });
    journal.close();

    const reopened = Journal.open({ path: file });
    try {
      expect(reopened.recovered.map((call) => [call.callId, call.started])).toEqual([
        ["waiting", false],
        ["approved", false],
        ["running", true],
      ]);
      expect(reopened.recovered[2]).toMatchObject({ sessionId: "s1", turnId: "t1", qualifiedName: "demo.run", alias: "demo__run" });
      const running = reopened.timeline({ sessionId: "s1", callId: "running" });
      expect(running.map((record) => record.kind)).toEqual(["call_requested", "approval_decided", "call_started", "call_progress", "call_finished"]);
      expect(running.at(-1)).toMatchObject({ outcome: "interrupted", code: "JOURNAL_INTERRUPTED" });
      expect(reopened.calls("s1").map((call) => [call.callId, call.outcome ?? null, call.started])).toEqual([
        ["done", "succeeded", true],
        ["waiting", "interrupted", false],
        ["approved", "interrupted", false],
        ["running", "interrupted", true],
        ["denied", null, false],
      ]);
      expect(reopened.session("s1")?.openCalls).toBe(0);
      expect(reopened.verify().ok).toBe(true);
      // An interrupted call is over: no second start, no second end.
      await expect(reopened.callStarted({ sessionId: "s1", callId: "approved" })).rejects.toMatchObject({ code: "JOURNAL_TERMINAL_EXISTS" });
      reopened.sessionClosed({ sessionId: "s1" });
    } finally {
      reopened.close();
    }
    const again = Journal.open({ path: file });
    expect(again.recovered).toEqual([]);
    again.close();
  });

  it("A3 E4 a start acknowledged through the tail log survives a SIGKILL before any commit, and ends interrupted", async () => {
    expect(existsSync(dist), "build the package first (the child imports dist/)").toBe(true);
    const file = folder.file("tail/journal.db");
    // Everything up to the kill runs in one turn of the event loop: no group commit runs,
    // so the session and its call exist only in the tail log when the process dies.
    const script = `
      import { Journal } from ${JSON.stringify(dist)};
      const journal = Journal.open({ path: ${JSON.stringify(file)} });
      await journal.flush();
      journal.sessionOpened({ sessionId: "s1", executionIdentity: "owid3:tail", identityInputs: {}, workspace: "/w" });
      journal.callRequested({ sessionId: "s1", turnId: "t1", callId: "c1", alias: "demo__run", qualifiedName: "demo.run", args: { n: 1 } });
      journal.approvalDecided({ sessionId: "s1", callId: "c1", decision: "approved", by: "bypass", scope: "once", key: "k" });
      journal.callStarted({ sessionId: "s1", callId: "c1" }).then(() => {
        journal.callProgress({ sessionId: "s1", callId: "c1", event: { late: true } });
        process.stdout.write("acked\\n");
        process.kill(process.pid, "SIGKILL");
      });
    `;
    const output = await runUntilKilled(script);
    expect(output).toBe("acked\n");
    const before = Journal.open({ path: file, readonly: true });
    expect(before.session("s1")).toBeUndefined(); // not committed: only the tail log has it
    before.close();

    const journal = Journal.open({ path: file });
    try {
      expect(journal.recovered).toEqual([
        { sessionId: "s1", callId: "c1", turnId: "t1", qualifiedName: "demo.run", alias: "demo__run", started: true },
      ]);
      // The progress record was queued after the start was made durable and never reached
      // the tail: it is lost, as documented; the start is not.
      expect(journal.timeline({ sessionId: "s1", callId: "c1" }).map((record) => record.kind)).toEqual([
        "call_requested",
        "approval_decided",
        "call_started",
        "call_finished",
      ]);
      expect(journal.verify()).toEqual({ ok: true, sessions: 1, records: 5 });
      expect(journal.warnings).toEqual([]);
    } finally {
      journal.close();
    }
    // Replay is idempotent: the tail was emptied, and a second open finds nothing to do.
    const again = Journal.open({ path: file });
    expect(again.recovered).toEqual([]);
    expect(again.verify()).toEqual({ ok: true, sessions: 1, records: 5 });
    again.close();
  });

  it("A3 E4 survives SIGKILL at random moments under load (with and without the commit thread): chain intact, acknowledged starts kept, every started call terminal", async () => {
    expect(existsSync(dist), "build the package first (the child imports dist/)").toBe(true);
    const file = folder.file("crash/journal.db");
    const rounds = 10;
    let totalRecovered = 0;
    for (let round = 0; round < rounds; round += 1) {
      const sessionId = `round-${round}`;
      // Both durabilities, with commits on the writer's thread and on the commit thread.
      const durability = round % 3 === 2 ? "strict" : "grouped";
      const commitThread = round % 2 === 0 ? "always" : "never";
      const acked = await runAndKill(file, sessionId, durability, commitThread, 5 + Math.floor(Math.random() * 120));

      // As the crash left it, the database is consistent; acknowledged starts not yet
      // committed there are in the tail log (grouped durability), which a writer replays.
      const before = Journal.open({ path: file, readonly: true });
      expect(before.verify().ok).toBe(true);
      before.close();

      const journal = Journal.open({ path: file });
      try {
        const calls = journal.calls(sessionId);
        const started = new Set(calls.filter((call) => call.started).map((call) => call.callId));
        for (const callId of acked) expect(started.has(callId), `acknowledged start of ${callId} survived`).toBe(true);
        const interrupted = calls.filter((call) => call.outcome === "interrupted").map((call) => call.callId);
        expect(journal.recovered.filter((call) => call.sessionId === sessionId).map((call) => call.callId).sort()).toEqual(interrupted.sort());
        totalRecovered += journal.recovered.length;
        const report = journal.verify();
        expect(report, JSON.stringify(report.firstBreak)).toMatchObject({ ok: true });
        // A crash alone loses nothing replay could not put back.
        expect(journal.warnings).toEqual([]);
        for (const session of journal.sessions()) {
          expect(session.openCalls).toBe(0);
          for (const call of journal.calls(session.sessionId)) {
            if (call.started) expect(call.outcome, `call ${call.callId}`).toBeDefined();
          }
        }
      } finally {
        journal.close();
      }
    }
    // The kills must actually have caught calls in flight, or the test proves nothing.
    expect(totalRecovered).toBeGreaterThan(0);
  });

  it("A3 a -wal lost after a crash: tail-log records past the gap are not replayed, and opening says so (warnings) instead of dropping them silently", async () => {
    expect(existsSync(dist), "build the package first (the child imports dist/)").toBe(true);
    const file = folder.file("lost-wal/journal.db");
    // c1's start reaches the tail log (seq 1-4); its finish (5) is committed without it;
    // c2's start reaches the tail log (6-8); then the process dies before any checkpoint.
    const script = `
      import { Journal } from ${JSON.stringify(dist)};
      const journal = Journal.open({ path: ${JSON.stringify(file)}, commitThread: "never" });
      await journal.flush();
      journal.sessionOpened({ sessionId: "s1", executionIdentity: "owid3:tail", identityInputs: {}, workspace: "/w" });
      for (const callId of ["c1", "c2"]) {
        journal.callRequested({ sessionId: "s1", turnId: "t1", callId, alias: "demo__run", qualifiedName: "demo.run", args: {} });
        journal.approvalDecided({ sessionId: "s1", callId, decision: "approved", by: "bypass", scope: "once", key: "k" });
        await journal.callStarted({ sessionId: "s1", callId });
        if (callId === "c1") {
          journal.callFinished({ sessionId: "s1", callId, outcome: "succeeded" });
          await journal.flush();
        }
      }
      process.stdout.write("acked\\n");
      process.kill(process.pid, "SIGKILL");
    `;
    const output = await runUntilKilled(script);
    expect(output).toBe("acked\n");
    // The committed records were only in the WAL.
    rmSync(`${file}-wal`);
    rmSync(`${file}-shm`, { force: true });

    const journal = Journal.open({ path: file });
    try {
      expect(journal.warnings).toEqual([
        {
          kind: "tail-records-lost",
          sessionId: "s1",
          message: expect.stringContaining(
            'session "s1": the tail log holds 3 record(s) from seq 6 that cannot be replayed: its chain in the database ends at seq 4, and record 5 is in neither. They are lost',
          ),
        },
      ]);
      // What the tail log could restore is back: c1 up to its start, so it ends interrupted.
      expect(journal.recovered.map((call) => [call.callId, call.started])).toEqual([["c1", true]]);
      expect(journal.verify()).toMatchObject({ ok: true });
    } finally {
      journal.close();
    }
  });
});

/** Runs the writer child until `ready`, lets it write for `delayMs`, SIGKILLs it; returns the acknowledged starts. */
function runAndKill(file: string, sessionId: string, durability: string, commitThread: string, delayMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const writer = spawn(process.execPath, [child, file, sessionId, durability, commitThread], { stdio: ["ignore", "pipe", "pipe"] });
    const acked: string[] = [];
    let buffer = "";
    let stderr = "";
    let killed = false;
    writer.stdout.setEncoding("utf8");
    writer.stdout.on("data", (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (line.startsWith("acked ")) acked.push(line.slice(6));
        if (line === "ready" && !killed) {
          killed = true;
          setTimeout(() => writer.kill("SIGKILL"), delayMs);
        }
      }
    });
    writer.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    writer.on("error", reject);
    writer.on("close", (code, signal) => {
      if (signal === "SIGKILL") resolve(acked);
      else reject(new Error(`writer exited with ${code ?? signal} before the kill: ${stderr}`));
    });
  });
}
