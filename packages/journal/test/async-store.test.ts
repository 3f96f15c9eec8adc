import { OpenWorkerError } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import { JOURNAL_ERRORS } from "../src/index.js";
import { JournalEngine, type GroupWrites, type JournalStore, type StoredSession } from "../src/internal/store.js";

/** A store whose commits finish when the test says so: the shape of a store on a database server. */
class DeferredStore implements JournalStore {
  readonly groups: GroupWrites[] = [];
  readonly pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  readonly inTransaction = false;
  session(): StoredSession | undefined {
    return undefined;
  }
  lastRef(): number {
    return 0;
  }
  lastFrame(): number {
    return 0;
  }
  sessionsWithOpenCalls(): string[] {
    return [];
  }
  newestFirst(): Iterable<string> {
    return [];
  }
  commit(group: GroupWrites): Promise<void> {
    this.groups.push(group);
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }
  beginRead(): void {}
  endRead(): void {}
  close(): void {}
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

function startedCall(engine: JournalEngine): Promise<void> {
  const { writer } = engine;
  writer.sessionOpened({ sessionId: "s", executionIdentity: "owid3:test", identityInputs: {}, workspace: "/w" });
  writer.callRequested({ sessionId: "s", turnId: "t", callId: "c", alias: "a__b", qualifiedName: "a.b", args: {} });
  writer.approvalDecided({ sessionId: "s", callId: "c", decision: "approved", by: "person", scope: "once", key: "k" });
  return writer.callStarted({ sessionId: "s", callId: "c" });
}

describe("the store seam with an asynchronous store", () => {
  it("A3: callStarted resolves only once the store's commit of its record resolved", async () => {
    const store = new DeferredStore();
    const engine = new JournalEngine(store, "test store");
    let acknowledged = false;
    const started = startedCall(engine).then(() => (acknowledged = true));
    await turn();
    expect(store.groups).toHaveLength(1);
    expect(String(store.groups[0]!.frames[4])).toContain('"kind":"call_started"');
    await turn();
    expect(acknowledged).toBe(false);
    store.pending[0]!.resolve();
    await started;
    expect(acknowledged).toBe(true);
  });

  it("A3: a failed asynchronous commit rejects its start with JOURNAL_WRITE_FAILED and refuses every later write", async () => {
    const store = new DeferredStore();
    const engine = new JournalEngine(store, "test store");
    const started = startedCall(engine);
    await turn();
    store.pending[0]!.reject(new Error("connection reset"));
    const error = await started.catch((caught: unknown) => caught);
    expect(OpenWorkerError.hasCode(error, JOURNAL_ERRORS.WRITE_FAILED)).toBe(true);
    expect(String((error as Error).message)).toContain("connection reset");
    expect(() => engine.writer.turnPrepared({ sessionId: "s", turnId: "t2", selectionFingerprint: "f", catalogFingerprints: {} })).toThrow(
      /accepts no more writes/,
    );
    await expect(engine.flush()).rejects.toThrow(/accepts no more writes/);
  });

  it("A3: flush waits for groups already handed to the store", async () => {
    const store = new DeferredStore();
    const engine = new JournalEngine(store, "test store");
    void startedCall(engine);
    await turn();
    let flushed = false;
    const flush = engine.flush().then(() => (flushed = true));
    await turn();
    expect(flushed).toBe(false);
    store.pending[0]!.resolve();
    await flush;
    expect(flushed).toBe(true);
  });
});
