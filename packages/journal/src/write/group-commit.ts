import { statSync } from "node:fs";
import path from "node:path";
import { JOURNAL_ERRORS, journalError } from "../errors.js";
import { openCallsJson } from "../records/call-phase.js";
import type { GroupOp, GroupWrites, JournalStore } from "../store/store.js";
import type { SessionState } from "./live-state.js";

type Waiter = { resolve: () => void; reject: (error: unknown) => void };

// A group commits at once at 512 records or 4 Mi characters (a result may be 256 KB, E3): a caller that never yields
// still gets bounded memory. A frame holds about 64 K characters at most; the file is checked at most every 200 ms.
const MAX_QUEUED_LINES = 512;
export const MAX_QUEUED_CHARS = 4 * 1024 * 1024;
const MAX_FRAME_CHARS = 64 * 1024;
const FILE_CHECK_INTERVAL_MS = 200;

/**
 * Group commit on the event loop: records are queued synchronously, and everything queued in one turn of the event loop commits in one transaction (scheduled with
 * `setImmediate`, or at once when the group reaches its size bound).
 */
export class GroupCommit {
  private touched: SessionState[] = [];
  private ops: (() => GroupOp)[] = [];
  private afterCommit: (() => void)[] = [];
  private waiters: Waiter[] = [];
  private scheduled = false;
  private failure: Error | undefined;
  private nextFrame: number;
  private queuedLines = 0;
  private queuedChars = 0;
  private readonly filePath: string | undefined;
  private readonly fileIdentity: { readonly dev: number; readonly ino: number } | undefined;
  private fileCheckedAt = Date.now();
  /** The newest commit an asynchronous store has not finished; it never rejects (a failure is kept in `failure`). */
  private inFlight: Promise<void> | undefined;

  /**
   * `file`: the journal's name in messages. `watchFile` (default true): `file` is a path whose file must stay there while open; a store
   * that is not a file passes false.
   */
  constructor(
    private readonly store: JournalStore,
    private readonly file: string,
    watchFile = true,
  ) {
    // The journal is the store's one writer (a shared store hands each writer its own range), so it assigns frame ids itself.
    this.nextFrame = store.lastFrame() + 1;
    // Absolute: a host that changes its working folder later must not look elsewhere.
    this.filePath = watchFile ? path.resolve(file) : undefined;
    if (this.filePath === undefined) return;
    const { dev, ino } = statSync(this.filePath);
    this.fileIdentity = { dev, ino };
  }
  /** Runs a read inside the store's open transaction (the next commit ends it), opening one if needed. */
  lookup<T>(read: () => T): T {
    if (!this.store.inTransaction) {
      this.store.beginRead();
      this.schedule();
    }
    return read();
  }
  assertHealthy(): void {
    if (this.failure !== undefined) throw this.failure;
  }
  /** Queues one frame line of a session, with the other write it implies and what runs once it is committed. */
  enqueue(session: SessionState, line: string, also?: () => GroupOp, after?: () => void): void {
    if (session.pending.length === 0) {
      session.pendingFirstSeq = session.seq + 1;
      this.touched.push(session);
    }
    session.pending.push(line);
    this.queuedLines += 1;
    this.queuedChars += line.length;
    if (also !== undefined) this.ops.push(also);
    if (after !== undefined) this.afterCommit.push(after);
    this.schedule();
  }
  makeRoom(): void {
    if (this.queuedLines >= MAX_QUEUED_LINES || this.queuedChars >= MAX_QUEUED_CHARS) this.commitNow();
  }
  whenCommitted(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.touched.length === 0 && this.ops.length === 0) {
      const inFlight = this.inFlight;
      if (inFlight === undefined) return Promise.resolve();
      return inFlight.then(() => (this.failure === undefined ? undefined : Promise.reject(this.failure)));
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }
  /**
   * Commits what is queued now. Throws `JOURNAL_WRITE_FAILED` if the commit (or an earlier one) failed. With an asynchronous store the
   * group is handed over now and its waiters settle when the store's commit does (the store commits groups in the order handed over).
   */
  commitNow(): void {
    if (this.failure !== undefined) throw this.failure;
    const waiters = this.waiters;
    const after = this.afterCommit;
    this.waiters = [];
    this.afterCommit = [];
    if (this.touched.length === 0 && this.ops.length === 0) {
      this.store.endRead();
      if (this.inFlight === undefined) settle(after, waiters);
      else this.settleAfter(this.inFlight, after, waiters);
      return;
    }
    let pending: void | Promise<void>;
    try {
      pending = this.store.commit(this.build());
    } catch (cause) {
      this.fail("a group commit failed", cause);
      for (const waiter of waiters) waiter.reject(this.failure);
      throw this.failure;
    } finally {
      for (const session of this.touched) session.pending = [];
      this.touched = [];
      this.ops = [];
      this.queuedLines = 0;
      this.queuedChars = 0;
    }
    if (pending === undefined) settle(after, waiters);
    else this.settleAfter(pending, after, waiters);
  }
  /** Settles a group handed to an asynchronous store once its commit ends; a failed one fails the journal. */
  private settleAfter(commit: Promise<void>, after: readonly (() => void)[], waiters: readonly Waiter[]): void {
    const done = commit.then(
      () => {
        if (this.inFlight === done) this.inFlight = undefined;
        if (this.failure === undefined) settle(after, waiters);
        else for (const waiter of waiters) waiter.reject(this.failure);
      },
      (cause: unknown) => {
        if (this.inFlight === done) this.inFlight = undefined;
        if (this.failure === undefined) this.fail("a group commit failed", cause);
        for (const waiter of waiters) waiter.reject(this.failure);
      },
    );
    this.inFlight = done;
  }
  private build(): GroupWrites {
    const frames: (string | number | null)[] = [];
    const heads: (string | number | null)[] = [];
    const ops: GroupOp[] = [];
    for (const session of this.touched) {
      const lines = session.pending;
      let from = 0;
      let chars = 0;
      for (let index = 0; index < lines.length; index += 1) {
        chars += lines[index]!.length + 1;
        if (chars < MAX_FRAME_CHARS && index < lines.length - 1) continue;
        const id = this.nextFrame;
        this.nextFrame += 1;
        const body = (from === 0 && index === lines.length - 1 ? lines : lines.slice(from, index + 1)).join("\n");
        frames.push(id, session.ref, session.pendingFirstSeq + from, session.headFrame, body);
        session.headFrame = id;
        from = index + 1;
        chars = 0;
      }
      if (session.closed) ops.push(["drop", session.ref]);
      else heads.push(session.ref, session.headFrame!, session.seq, session.head, session.callCount, openCallsJson(session.openCalls.values()));
    }
    for (const op of this.ops) ops.push(op());
    return { frames, heads, ops };
  }
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.checkFile();
      try {
        this.commitNow();
      } catch {
        // Its waiters were rejected; every later write throws the failure.
      }
    });
  }
  /**
   * A journal file deleted or replaced while open would take the records committed since with it, unseen: the writer checks now and then that its path still leads to
   * the file it opened, and fails (refusing every later write) if not.
   */
  private checkFile(): void {
    if (this.failure !== undefined || this.filePath === undefined) return;
    const now = Date.now();
    if (now - this.fileCheckedAt < FILE_CHECK_INTERVAL_MS) return;
    this.fileCheckedAt = now;
    let problem: string | undefined;
    try {
      const stats = statSync(this.filePath);
      if (stats.ino !== this.fileIdentity!.ino || stats.dev !== this.fileIdentity!.dev)
        problem = "the journal file was replaced by another file while it was open";
    } catch {
      problem = "the journal file is gone: it (or its folder) was deleted while it was open";
    }
    if (problem === undefined) return;
    this.fail(problem, new Error("the records written since are not in any file"));
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.reject(this.failure);
  }
  private fail(what: string, cause: unknown): void {
    this.failure = journalError(
      JOURNAL_ERRORS.WRITE_FAILED,
      `journal ${JSON.stringify(this.file)}: ${what} (${cause instanceof Error ? cause.message : String(cause)}); the records of that group were not acknowledged and are not in the file, and the journal accepts no more writes: reopen it`,
      { path: this.file },
      cause,
    );
  }
}

function settle(after: readonly (() => void)[], waiters: readonly Waiter[]): void {
  for (const run of after) run();
  for (const waiter of waiters) waiter.resolve();
}
