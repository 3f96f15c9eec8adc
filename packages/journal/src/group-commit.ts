import type Database from "better-sqlite3";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import { openCallsJson, type SessionState } from "./live-state.js";

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
  private scheduled = false;
  private failure: Error | undefined;
  private nextFrame: number;
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
   * with the group's commit on the next tick.
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
    if (session.pending.length === 0) {
      session.pendingFirstSeq = session.seq + 1;
      this.touched.push(session);
    }
    session.pending.push(line);
    if (also !== undefined) this.queue.push(also);
    if (after !== undefined) this.afterCommit.push(after);
    this.schedule();
  }

  /** A promise settled when everything queued so far is committed. */
  whenCommitted(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  get pending(): number {
    return this.queue.length + this.touched.length;
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
        this.failure = journalError(
          JOURNAL_ERRORS.WRITE_FAILED,
          `journal ${JSON.stringify(this.file)}: a group commit failed (${cause instanceof Error ? cause.message : String(cause)}); the records of that group are lost and the journal accepts no more writes, reopen it`,
          { path: this.file },
          cause,
        );
        for (const waiter of waiters) waiter.reject(this.failure);
        throw this.failure;
      } finally {
        for (const session of this.touched) session.pending = [];
        this.touched = [];
        this.queue = [];
      }
    }
    for (const run of after) run();
    for (const waiter of waiters) waiter.resolve();
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

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      try {
        this.commitNow();
      } catch {
        // Already recorded in `failure`: the next write or flush reports it.
      }
    });
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
