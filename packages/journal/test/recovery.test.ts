import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Journal } from "../src/index.js";
import { chainHash } from "../src/records/chain.js";
import { encodeRecord } from "../src/records/encode.js";
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

  it("A3 E4 a start survives a SIGKILL right after it was acknowledged, and ends interrupted; what was queued after it is not there", async () => {
    expect(existsSync(dist), "build the package first (the child imports dist/)").toBe(true);
    const file = folder.file("tail/journal.db");
    // The start resolves once its commit is done; the progress queued after it would
    // commit in the next turn of the event loop, which the kill never lets come.
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
    expect(before.session("s1")).toMatchObject({ records: 4, openCalls: 1 }); // committed when the start resolved
    before.close();

    const journal = Journal.open({ path: file });
    try {
      expect(journal.recovered).toEqual([{ sessionId: "s1", callId: "c1", turnId: "t1", qualifiedName: "demo.run", alias: "demo__run", started: true }]);
      // The progress record was queued after the start was acknowledged and never
      // committed: it is lost, as documented; the start is not.
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
    // Recovery is done once: a second open finds nothing to do.
    const again = Journal.open({ path: file });
    expect(again.recovered).toEqual([]);
    expect(again.verify()).toEqual({ ok: true, sessions: 1, records: 5 });
    again.close();
  });

  it("A3 E4 survives SIGKILL at random moments under load (grouped and strict): chain intact, acknowledged starts kept, every started call terminal", async () => {
    expect(existsSync(dist), "build the package first (the child imports dist/)").toBe(true);
    const file = folder.file("crash/journal.db");
    const rounds = 10;
    let totalRecovered = 0;
    for (let round = 0; round < rounds; round += 1) {
      const sessionId = `round-${round}`;
      const durability = round % 3 === 2 ? "strict" : "grouped";
      const acked = await runAndKill(file, sessionId, durability, 5 + Math.floor(Math.random() * 120));

      // As the crash left it, the database is consistent and holds every acknowledged start.
      const before = Journal.open({ path: file, readonly: true });
      expect(before.verify().ok).toBe(true);
      before.close();

      const journal = Journal.open({ path: file });
      try {
        const calls = journal.calls(sessionId);
        const started = new Set(calls.filter((call) => call.started).map((call) => call.callId));
        for (const callId of acked) expect(started.has(callId), `acknowledged start of ${callId} survived`).toBe(true);
        const interrupted = calls.filter((call) => call.outcome === "interrupted").map((call) => call.callId);
        expect(
          journal.recovered
            .filter((call) => call.sessionId === sessionId)
            .map((call) => call.callId)
            .sort(),
        ).toEqual(interrupted.sort());
        totalRecovered += journal.recovered.length;
        const report = journal.verify();
        expect(report, JSON.stringify(report.firstBreak)).toMatchObject({ ok: true });
        // A crash alone loses nothing acknowledged, and nothing needs a warning.
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

  it("A3 a legacy tail log beside the journal is replayed: its records the file lacks are committed, those it cannot replay (a gap, a flipped byte) are reported, and the files go", async () => {
    const file = folder.file("legacy/journal.db");
    const writer = Journal.open({ path: file });
    openSession(writer, "s1");
    for (const callId of ["c1", "c2"]) {
      request(writer, "s1", callId);
      approve(writer, "s1", callId);
    }
    writer.close();
    const reader = Journal.open({ path: file, readonly: true });
    const head = [...reader.records("s1")].at(-1)!;
    reader.close();
    // What an older writer left in its tail log: c1's start (seq 6), then, in a second
    // write, c2's start with a flipped byte (seq 7), then a record past a gap (seq 9).
    const at = "2026-01-01T00:00:00.000Z";
    const started = (callId: string, seq: number) => encodeRecord({ at, callId, kind: "call_started", seq, sessionId: "s1" });
    const first = started("c1", 6);
    const firstHash = chainHash(head.hash, first);
    const second = started("c2", 7).replace('"c2"', '"c3"');
    const gap = started("c2", 9);
    const write = (lines: string[]) => {
      const bytes = Buffer.from(lines.map((line) => `${line}\n`).join(""));
      return Buffer.concat([bytes, Buffer.from(`#${crc32(bytes).toString(16).padStart(8, "0")}\n`)]);
    };
    writeFileSync(`${file}-tail`, Buffer.concat([write([`${firstHash} ${first}`]), write([`${chainHash(firstHash, started("c2", 7))} ${second}`])]));
    writeFileSync(`${file}-tail.1`, write([`${"0".repeat(64)} ${gap}`]));

    const journal = Journal.open({ path: file });
    try {
      expect(journal.warnings).toEqual([
        {
          kind: "tail-records-lost",
          sessionId: "s1",
          message: expect.stringContaining('session "s1": the tail log holds 2 record(s) from seq 7 that cannot be replayed'),
        },
      ]);
      expect(journal.timeline({ sessionId: "s1", callId: "c1" }).map((record) => record.kind)).toEqual([
        "call_requested",
        "approval_decided",
        "call_started",
        "call_finished",
      ]);
      expect(journal.timeline({ sessionId: "s1", callId: "c1" })[2]).toMatchObject({ at, hash: firstHash });
      expect(journal.recovered.map((call) => [call.callId, call.started])).toEqual([
        ["c1", true],
        ["c2", false],
      ]);
      expect(journal.verify()).toMatchObject({ ok: true });
    } finally {
      journal.close();
    }
    expect(existsSync(`${file}-tail`)).toBe(false);
    expect(existsSync(`${file}-tail.1`)).toBe(false);
  });
});

/** Runs the writer child until `ready`, lets it write for `delayMs`, SIGKILLs it; returns the acknowledged starts. */
function runAndKill(file: string, sessionId: string, durability: string, delayMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const writer = spawn(process.execPath, [child, file, sessionId, durability], { stdio: ["ignore", "pipe", "pipe"] });
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
