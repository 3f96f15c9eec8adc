import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import path from "node:path";
import { argumentsDigest, type JournalRecord } from "@openworker/journal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresJournal } from "../src/index.js";
import { startPostgres, type PostgresServer } from "../src/testing/postgres-server.js";

const CHILD = path.join(import.meta.dirname, "fixtures", "host-child.mjs");

/** A host process of the fleet, with every line it printed. */
class Host {
  readonly lines: string[] = [];
  private readonly child: ChildProcessWithoutNullStreams;
  private waiters: (() => void)[] = [];
  stderr = "";

  constructor(
    url: string,
    readonly name: string,
    sessions: number,
    storeApproval: boolean,
  ) {
    this.child = spawn(process.execPath, [CHILD, url, name, String(sessions), storeApproval ? "yes" : "no"], { stdio: "pipe" });
    let partial = "";
    this.child.stdout.on("data", (chunk: Buffer) => {
      const text = partial + chunk.toString();
      const lines = text.split("\n");
      partial = lines.pop()!;
      this.lines.push(...lines);
      for (const waiter of this.waiters.splice(0)) waiter();
    });
    this.child.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
  }
  async until(test: () => boolean, what: string, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!test()) {
      if (this.child.exitCode !== null || Date.now() > deadline)
        throw new Error(
          `host ${this.name}: ${what} did not happen (exit ${this.child.exitCode}, stderr: ${this.stderr}, last lines: ${this.lines.slice(-3).join(" / ")})`,
        );
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }
  count(prefix: string): number {
    return this.lines.filter((line) => line.startsWith(prefix)).length;
  }
  calls(kind: "acked" | "finished"): Set<string> {
    return new Set(this.lines.filter((line) => line.startsWith(`${kind} `)).map((line) => line.split(" ")[2]!));
  }
  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }
  kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.kill("SIGKILL");
    return exited;
  }
  exited(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }
}

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describe("three hosts, one PostgreSQL journal", () => {
  it("A3, E4, A2: concurrent sessions on three hosts, shared approvals, a host killed with SIGKILL recovered by another: verify clean, nothing lost or replayed", async () => {
    const url = await server.database("fleet");
    // The test's own journal stores one "once" approval: of three hosts consuming it, exactly one gets it.
    const setup = await PostgresJournal.open({ connectionString: url });
    const onceKey = {
      executionIdentity: "owid3:fleet",
      qualifiedName: "fleet.once",
      schemaFingerprint: "sha256:schema",
      argsDigest: argumentsDigest({ only: "once" }),
    };
    await setup.storeApproval(onceKey, { scope: "once", by: "person", who: "test" });
    await setup.close();

    const a = new Host(url, "host-a", 3, true);
    await a.until(() => a.count("approval stored") === 1, "storing the shared approval");
    const b = new Host(url, "host-b", 3, false);
    const c = new Host(url, "host-c", 3, false);
    const hosts = [a, b, c];
    try {
      for (const host of hosts) await host.until(() => host.count("acked ") >= 30, "30 acknowledged starts");
      // B and C never stored an approval: every call they ran found A's (A2, M3: same identity, tool and schema).
      for (const host of [b, c]) {
        expect(host.count("approval none")).toBe(0);
        expect(host.count("approval found")).toBeGreaterThanOrEqual(30);
      }
      expect(hosts.reduce((sum, host) => sum + host.count("once got"), 0)).toBe(1);

      await c.kill();
      const ackedByC = c.calls("acked");
      const finishedByC = c.calls("finished");
      // C's lease (1 s) runs out; A takes its sessions over.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      a.send("recover");
      await a.until(() => a.count("recovered ") === 1, "recovering host-c");
      const recovery = JSON.parse(a.lines.find((line) => line.startsWith("recovered "))!.slice("recovered ".length)) as {
        sessions: string[];
        recovered: { sessionId: string; callId: string; started: boolean }[];
        warnings: unknown[];
      };
      expect(recovery.sessions.sort()).toEqual(["host-c-s1", "host-c-s2", "host-c-s3"]);
      expect(recovery.warnings).toEqual([]);
      expect(recovery.recovered.length).toBeGreaterThanOrEqual(1);

      for (const host of [a, b]) host.send("stop");
      for (const host of [a, b]) {
        await host.until(() => host.count("done") === 1, "stopping");
        expect(await host.exited()).toBe(0);
      }

      const reader = await PostgresJournal.open({ connectionString: url, readonly: true });
      try {
        expect(await reader.verify()).toMatchObject({ ok: true, sessions: 9 });
        const interrupted = new Set(recovery.recovered.map((call) => call.callId));
        for (const session of ["host-c-s1", "host-c-s2", "host-c-s3"]) {
          const records = await reader.records(session);
          const byCall = groupByCall(records);
          for (const [callId, own] of byCall) {
            const kinds = own.map((record) => record.kind);
            // Nothing replayed: one start at most, one terminal record exactly, and nothing after it.
            expect(kinds.filter((kind) => kind === "call_started").length).toBeLessThanOrEqual(1);
            expect(kinds.filter((kind) => kind === "call_finished")).toEqual(["call_finished"]);
            expect(kinds.at(-1)).toBe("call_finished");
            const terminal = own.at(-1) as JournalRecord & { outcome: string };
            expect(terminal.outcome === "interrupted").toBe(interrupted.has(callId));
          }
          // Nothing lost: every start C was told about is in the journal.
          for (const callId of ackedByC) if (callId.startsWith(`${session}-`)) expect(byCall.get(callId)?.map((r) => r.kind)).toContain("call_started");
          for (const callId of ackedByC) if (callId.startsWith(`${session}-`) && !finishedByC.has(callId)) expect(interrupted.has(callId)).toBe(true);
          expect(await reader.session(session)).toMatchObject({ openCalls: 0 });
        }
        // A call C was told had started is recovered as started: its tool may have had effects (E4).
        for (const call of recovery.recovered) if (ackedByC.has(call.callId)) expect(call.started).toBe(true);
        // A's and B's calls all ended as they ran, and their sessions closed.
        for (const host of [a, b]) {
          for (const index of [1, 2, 3]) {
            const sessionId = `${host.name}-s${index}`;
            expect(await reader.session(sessionId)).toMatchObject({ openCalls: 0, closedAt: expect.any(String) });
            const calls = await reader.calls(sessionId);
            expect(calls.every((call) => call.outcome === "succeeded")).toBe(true);
            for (const callId of host.calls("acked")) if (callId.startsWith(`${sessionId}-`)) expect(calls.some((call) => call.callId === callId)).toBe(true);
          }
        }
        expect(await reader.approvals({ qualifiedName: "fleet.tool" })).toHaveLength(1);
      } finally {
        await reader.close();
      }
    } finally {
      for (const host of hosts) if (host.lines.at(-1) !== "done") await host.kill().catch(() => undefined);
    }
  }, 90_000);
});

function groupByCall(records: readonly JournalRecord[]): Map<string, JournalRecord[]> {
  const calls = new Map<string, JournalRecord[]>();
  for (const record of records) {
    if (!("callId" in record)) continue;
    const own = calls.get(record.callId) ?? [];
    own.push(record);
    calls.set(record.callId, own);
  }
  return calls;
}
