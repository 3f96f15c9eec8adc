import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Journal } from "../src/index.js";
import { verifyChains } from "../src/verify/verify.js";
import { approve, completeCall, openSession, request, temporaryFolderPerTest, untilReady } from "./helpers.js";

// verify() beside a live writer reads in short transactions, so the writer's checkpoints
// keep the WAL small; records committed meanwhile must never look like a break.

const dist = path.resolve(import.meta.dirname, "../dist/index.js");

const folder = temporaryFolderPerTest();

/**
 * "long" (open, 1 + 4 × 30 records, one frame per call), "open-0".."open-3" (open, a call
 * done and one waiting), "closed-0".."closed-3" (closed).
 */
async function busyJournal(file: string): Promise<Journal> {
  const writer = Journal.open({ path: file });
  openSession(writer, "long");
  for (let call = 0; call < 30; call += 1) {
    await completeCall(writer, "long", `l${call}`);
    await writer.flush();
  }
  for (let index = 0; index < 4; index += 1) {
    openSession(writer, `open-${index}`);
    await completeCall(writer, `open-${index}`, "done");
    request(writer, `open-${index}`, "waiting");
    openSession(writer, `closed-${index}`);
    await completeCall(writer, `closed-${index}`, "done");
    writer.sessionClosed({ sessionId: `closed-${index}` });
    await writer.flush();
  }
  return writer;
}

describe("verify beside a writer (A3)", () => {
  it("A3 a writer in this process committing between verify's read transactions (sessions extended, closed, opened) never makes it report a break; it checks the file as it stood when it began", async () => {
    const file = folder.file("journal.db");
    const writer = await busyJournal(file);
    const reader = new Database(file, { readonly: true });
    const starts: Promise<void>[] = [];
    try {
      const before = writer.sessions();
      let pauses = 0;
      // Each pause between two read transactions commits something new.
      const commitSomething = () => {
        pauses += 1;
        const open = `open-${Math.floor(pauses / 4) % 4}`;
        switch (pauses % 4) {
          case 0: {
            const callId = `more-${pauses}`;
            request(writer, "long", callId);
            approve(writer, "long", callId);
            starts.push(writer.callStarted({ sessionId: "long", callId }));
            writer.callFinished({ sessionId: "long", callId, outcome: "succeeded" });
            break;
          }
          case 1:
            if (writer.session(open)?.closedAt === undefined) request(writer, open, `more-${pauses}`);
            break;
          case 2:
            if (writer.session(open)?.closedAt === undefined) {
              for (const call of writer.calls(open)) {
                if (call.outcome === undefined) writer.callFinished({ sessionId: open, callId: call.callId, outcome: "cancelled" });
              }
              writer.sessionClosed({ sessionId: open });
            }
            break;
          default:
            openSession(writer, `new-${pauses}`);
            request(writer, `new-${pauses}`, "c1");
        }
        writer.sessions(); // commits now
      };
      const report = verifyChains(reader, undefined, { readsPerTransaction: 2, betweenTransactions: commitSomething });
      expect(report, JSON.stringify(report.firstBreak)).toEqual({
        ok: true,
        sessions: before.length,
        records: before.reduce((sum, session) => sum + session.records, 0),
      });
      expect(pauses).toBeGreaterThan(20);
      expect(writer.sessions().length).toBeGreaterThan(before.length);
      // What was written meanwhile is consistent too.
      expect(writer.verify()).toMatchObject({ ok: true });
      await Promise.all(starts);
    } finally {
      reader.close();
      writer.close();
    }
  });

  it("A3 verify holds no read transaction between its batches: another connection's checkpoint(TRUNCATE) succeeds there every time", async () => {
    const file = folder.file("journal.db");
    const writer = await busyJournal(file);
    const reader = new Database(file, { readonly: true });
    const checkpointer = new Database(file);
    checkpointer.pragma("busy_timeout = 0");
    try {
      const checkpoints: unknown[] = [];
      const walSizes: number[] = [];
      const report = verifyChains(reader, undefined, {
        readsPerTransaction: 4,
        betweenTransactions: () => {
          // Something in the WAL for the checkpoint to copy, then a checkpoint that must wait
          // for every reader (SQLite answers busy at once while one holds a read transaction).
          writer.revoked({ sessionId: "long", tool: "demo.run", reason: "turn" });
          writer.sessions();
          checkpoints.push((checkpointer.pragma("wal_checkpoint(TRUNCATE)") as unknown[])[0]);
          walSizes.push(statSync(`${file}-wal`).size);
        },
      });
      expect(report).toMatchObject({ ok: true });
      expect(checkpoints.length).toBeGreaterThan(10);
      expect(writer.verify()).toMatchObject({ ok: true });
      for (const checkpoint of checkpoints) expect(checkpoint).toEqual({ busy: 0, log: 0, checkpointed: 0 });
      expect(walSizes.every((size) => size === 0)).toBe(true);
    } finally {
      checkpointer.close();
      reader.close();
      writer.close();
    }
  });

  it("A3 verify while a writer process opens, extends and closes sessions: every report is ok", async () => {
    expect(existsSync(dist), "build the package first (the child imports dist/)").toBe(true);
    const file = folder.file("live/journal.db");
    // Eight lanes, each opening a session, making three calls and closing it, for ever
    // (a timer between calls keeps the file small enough to verify many times).
    const script = `
      import { Journal } from ${JSON.stringify(dist)};
      const journal = Journal.open({ path: ${JSON.stringify(file)} });
      let sessions = 0;
      async function lane() {
        for (;;) {
          const sessionId = "s" + (sessions += 1);
          journal.sessionOpened({ sessionId, executionIdentity: "owid3:live", identityInputs: {}, workspace: "/w" });
          for (let call = 0; call < 3; call += 1) {
            const callId = "c" + call;
            journal.callRequested({ sessionId, turnId: "t1", callId, alias: "demo__run", qualifiedName: "demo.run", args: { call } });
            journal.approvalDecided({ sessionId, callId, decision: "approved", by: "policy", scope: "session", key: "k" });
            await journal.callStarted({ sessionId, callId });
            journal.callFinished({ sessionId, callId, outcome: "succeeded", result: { call } });
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
          journal.sessionClosed({ sessionId });
          if (sessions === 32) { await journal.flush(); process.stdout.write("ready\\n"); }
        }
      }
      await Promise.all(Array.from({ length: 8 }, lane));
    `;
    const writer = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await untilReady(writer);
      const journal = Journal.open({ path: file, readonly: true });
      const reader = new Database(file, { readonly: true });
      // Another connection looks at the file between verify's transactions.
      const probe = new Database(file, { readonly: true });
      const lastFrame = probe.prepare<[], number>("SELECT max(id) FROM frames").pluck();
      try {
        let interleaved = 0;
        for (let round = 0; round < 8; round += 1) {
          const library = journal.verify();
          expect(library, JSON.stringify(library.firstBreak)).toMatchObject({ ok: true });
          // The same walk in many short transactions, the writer committing between them.
          const seen: number[] = [];
          const paced = verifyChains(reader, undefined, { readsPerTransaction: 16, betweenTransactions: () => seen.push(lastFrame.get()!) });
          expect(paced, JSON.stringify(paced.firstBreak)).toMatchObject({ ok: true });
          if (seen.length > 1 && seen.at(-1)! > seen[0]!) interleaved += 1;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        // The writer's commits did land between the transactions of one walk.
        expect(interleaved).toBeGreaterThan(0);
      } finally {
        probe.close();
        reader.close();
        journal.close();
      }
    } finally {
      writer.removeAllListeners("exit");
      const exited = new Promise((resolve) => writer.once("exit", resolve));
      writer.kill("SIGKILL");
      await exited;
    }
  });
});
