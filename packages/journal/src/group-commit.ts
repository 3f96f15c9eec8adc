import type Database from "better-sqlite3";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import { openCallsJson, type SessionState } from "./live-state.js";
import type { TailLog } from "./tail-log.js";

type Waiter = { resolve: () => void; reject: (error: unknown) => void };

const FRAME_COLUMNS = 5;
const HEAD_COLUMNS = 6;
/**
 * Rows per multi-row INSERT. One statement per chunk instead of one per row saves the
 * per-statement binding and VDBE start-up; smaller chunks take the remainder so a group
 * never runs more than a few statements.
 */
const CHUNKS = [32, 8, 2, 1] as const;
/**
 * Queued records at which the group commits at once, before it takes the next one,
 * instead of waiting for its timer: a caller that never yields (a tight loop of
 * microtasks) still gets bounded memory and a bounded tail log.
 */
const MAX_QUEUED_LINES = 512;
/**
 * With a tail log, how long queued records wait for their commit at most (unless a flush
 * or the queue's size asks sooner). Readers in other processes see records that much later.
 */
const TAIL_COMMIT_INTERVAL_MS = 2;

/**
 * Group commit: records are queued synchronously and committed together in one
 * transaction on the next turn of the event loop (`setImmediate`), so concurrent calls
 * share one commit (and, in strict mode, one fsync) instead of paying one each. A
 * commit writes one frame per session it touches (its queued records) and that
 * session's head row; see `frames.ts`.
 *
 * A failed commit loses its whole group. The in-memory chain heads then no longer match
 * the file, so the journal refuses every later write with `JOURNAL_WRITE_FAILED`
 * rather than write a broken chain; reopening the file restores a consistent state.
 */
export class GroupCommit {
  /** Sessions with queued records, in the order they were first touched. */
  private touched: SessionState[] = [];
  /** Other writes of the group (a session's row when it opens or closes). */
  private queue: (() => void)[] = [];
  private afterCommit: (() => void)[] = [];
  private waiters: Waiter[] = [];
  private immediate = false;
  private timer: NodeJS.Timeout | undefined;
  private failure: Error | undefined;
  private nextFrame: number;
  /** Lines queued since the tail log was last written (grouped durability). */
  private unlogged: string[] = [];
  /** The shared tail-log write at the end of this turn, once a start in it already wrote. */
  private tailBatch: Promise<void> | undefined;
  private wroteThisTurn = false;
  private queuedLines = 0;
  private tail: TailLog | undefined;
  private readonly frameInserts: ReadonlyMap<number, Database.Statement>;
  private readonly headUpserts: ReadonlyMap<number, Database.Statement>;
  private readonly dropHead: Database.Statement;
  private readonly begin: Database.Statement;
  private readonly end: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly commitGroup: () => void;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
  ) {
    this.begin = db.prepare("BEGIN");
    this.end = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
    this.frameInserts = multiRow(db, "INSERT INTO frames (id, session_ref, first_seq, prev_frame, body)", FRAME_COLUMNS);
    this.headUpserts = multiRow(
      db,
      "INSERT OR REPLACE INTO live_sessions (ref, head_frame, seq, hash, calls, open_calls)",
      HEAD_COLUMNS,
    );
    this.dropHead = db.prepare("DELETE FROM live_sessions WHERE ref = ?");
    // The journal is the file's one writer, so frame ids are assigned here, which lets a
    // group insert its frames in a few multi-row statements.
    this.nextFrame = ((db.prepare("SELECT max(id) AS id FROM frames").get() as { id: number | null }).id ?? 0) + 1;
    this.commitGroup = () => {
      if (!db.inTransaction) this.begin.run();
      try {
        this.writeFrames();
        for (const write of this.queue) write();
        this.end.run();
      } catch (error) {
        if (db.inTransaction) this.rollback.run();
        throw error;
      }
    };
  }

  /**
   * Runs a lookup inside the group's transaction, opening it if needed. A statement
   * outside a transaction pays for its own read transaction (~12 µs in WAL mode, most
   * of a call's budget); inside one it costs about a microsecond. The transaction ends
   * with the group's commit.
   */
  lookup<T>(read: () => T): T {
    if (!this.db.inTransaction) {
      this.begin.run();
      this.schedule();
    }
    return read();
  }

  /** Throws the failure of an earlier commit, if any. */
  assertHealthy(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /**
   * Queues one record line of a session (its `seq` is `session.seq + 1`), with the other
   * writes it implies and what runs once it is committed.
   */
  enqueueRecord(session: SessionState, line: string, also?: () => void, after?: () => void): void {
    // A full group commits before it takes more. Here every earlier write has applied all
    // of its state (seq, head, open calls) and this one has applied none that a commit
    // reads, so the head rows it writes match its frames.
    if (this.queuedLines >= MAX_QUEUED_LINES) this.commitNow();
    if (session.pending.length === 0) {
      session.pendingFirstSeq = session.seq + 1;
      this.touched.push(session);
    }
    session.pending.push(line);
    if (this.tail !== undefined) this.unlogged.push(line);
    this.queuedLines += 1;
    if (also !== undefined) this.queue.push(also);
    if (after !== undefined) this.afterCommit.push(after);
    this.schedule();
  }

  /** From now on, `whenDurable` writes the tail log instead of waiting for the commit. */
  useTail(tail: TailLog): void {
    this.tail = tail;
  }

  /**
   * A promise settled once everything queued so far would survive a process crash: after
   * a `write()` of the queued lines to the tail log (grouped durability), else when the
   * group is committed (strict: and fsynced). The first start of an event-loop turn
   * writes at once (a lone caller waits for nothing else); later starts in the same turn
   * share one write at the end of it, so 32 concurrent sessions pay two `write()`s per
   * turn, not 32.
   */
  whenDurable(): Promise<void> {
    if (this.tail === undefined) return this.whenCommitted();
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.unlogged.length === 0) return Promise.resolve();
    if (this.tailBatch !== undefined) return this.tailBatch;
    if (!this.wroteThisTurn) {
      this.wroteThisTurn = true;
      setImmediate(() => (this.wroteThisTurn = false));
      return this.writeTail() ? Promise.resolve() : Promise.reject(this.failure);
    }
    this.tailBatch = new Promise((resolve, reject) => {
      setImmediate(() => {
        this.tailBatch = undefined;
        if (this.writeTail()) resolve();
        else reject(this.failure);
      });
    });
    return this.tailBatch;
  }

  /** Writes the unlogged lines to the tail log; false (and the journal failed) if that fails. */
  private writeTail(): boolean {
    if (this.failure !== undefined) return false;
    if (this.unlogged.length === 0) return true;
    try {
      this.tail!.append(this.unlogged);
    } catch (cause) {
      this.fail("writing the tail log failed", cause);
      return false;
    }
    this.unlogged = [];
    return true;
  }

  /** A promise settled when everything queued so far is committed. */
  whenCommitted(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule(true);
    });
  }

  get pending(): number {
    return this.queue.length + this.touched.length;
  }

  /** Stops the commit timer (the journal is closing; `commitNow` has run). */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Commits everything queued, now. Throws if the commit fails. */
  commitNow(): void {
    if (this.failure !== undefined) throw this.failure;
    const waiters = this.waiters;
    const after = this.afterCommit;
    this.waiters = [];
    this.afterCommit = [];
    if (this.pending > 0 || this.db.inTransaction) {
      try {
        this.commitGroup();
      } catch (cause) {
        this.fail("a group commit failed", cause);
        for (const waiter of waiters) waiter.reject(this.failure);
        throw this.failure;
      } finally {
        for (const session of this.touched) session.pending = [];
        this.touched = [];
        this.queue = [];
        this.unlogged = [];
        this.queuedLines = 0;
      }
      // Every line in the tail log is in this commit or an earlier one. A failed reset
      // only leaves the log larger; the next commit tries again.
      try {
        this.tail?.resetIfLarge();
      } catch {
        // see above
      }
    }
    for (const run of after) run();
    for (const waiter of waiters) waiter.resolve();
  }

  private fail(what: string, cause: unknown): void {
    this.failure = journalError(
      JOURNAL_ERRORS.WRITE_FAILED,
      `journal ${JSON.stringify(this.file)}: ${what} (${cause instanceof Error ? cause.message : String(cause)}); the records of that group are lost and the journal accepts no more writes, reopen it`,
      { path: this.file },
      cause,
    );
  }

  /**
   * One frame per touched session (linked to its previous frame), then the head rows of
   * the sessions still open. A session that closed in this group drops its head row:
   * its `sessions` row takes the final head (see the writer's close).
   */
  private writeFrames(): void {
    const frames: (string | number | null)[] = [];
    const heads: (string | number)[] = [];
    for (const session of this.touched) {
      const id = this.nextFrame;
      this.nextFrame += 1;
      frames.push(id, session.ref, session.pendingFirstSeq, session.headFrame, session.pending.join("\n"));
      session.headFrame = id;
      if (session.closed) this.dropHead.run(session.ref);
      else heads.push(session.ref, id, session.seq, session.head, session.callCount, openCallsJson(session));
    }
    insertChunks(this.frameInserts, frames, FRAME_COLUMNS);
    insertChunks(this.headUpserts, heads, HEAD_COLUMNS);
  }

  /**
   * Schedules the group's commit: on the next turn of the event loop when someone waits
   * for it (`soon`: a flush, or a start under strict durability), else, with a tail log,
   * after {@link TAIL_COMMIT_INTERVAL_MS}: starts are already durable in the tail, so
   * waiting a little longer only makes groups larger (fewer, fuller commits).
   */
  private schedule(soon = false): void {
    if (soon || this.tail === undefined) {
      if (this.immediate) return;
      this.immediate = true;
      setImmediate(() => {
        this.immediate = false;
        this.commitScheduled();
      });
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.commitScheduled();
    }, TAIL_COMMIT_INTERVAL_MS);
  }

  private commitScheduled(): void {
    try {
      this.commitNow();
    } catch {
      // Already recorded in `failure`: the next write or flush reports it.
    }
  }
}

function multiRow(db: Database.Database, head: string, columns: number): ReadonlyMap<number, Database.Statement> {
  const row = `(${Array.from({ length: columns }, () => "?").join(", ")})`;
  return new Map(CHUNKS.map((size) => [size, db.prepare(`${head} VALUES ${Array.from({ length: size }, () => row).join(", ")}`)]));
}

function insertChunks(inserts: ReadonlyMap<number, Database.Statement>, values: readonly unknown[], columns: number): void {
  let offset = 0;
  let left = values.length / columns;
  for (const size of CHUNKS) {
    const insert = inserts.get(size)!;
    for (; left >= size; left -= size, offset += size * columns) insert.run(values.slice(offset, offset + size * columns));
  }
}
