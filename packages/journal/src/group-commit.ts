import type Database from "better-sqlite3";
import { JOURNAL_ERRORS, journalError } from "./errors.js";

type Waiter = { resolve: () => void; reject: (error: unknown) => void };

/** The columns of one `records` row, in insert order. */
export type RecordRow = readonly [
  sessionRef: number,
  seq: number,
  kind: string,
  callId: string | null,
  data: string,
  prevHash: string,
  hash: string,
];

const RECORD_COLUMNS = 7;
/**
 * Rows per multi-row INSERT. One statement per chunk instead of one per record saves
 * the per-statement binding and VDBE start-up; chunks stay far below SQLite's 32,766
 * parameter limit. Smaller chunks take the remainder so a group never runs more than a
 * few statements.
 */
const CHUNKS = [64, 16, 4, 1] as const;

/**
 * Group commit: writes are queued synchronously and committed together in one
 * transaction on the next turn of the event loop (`setImmediate`), so concurrent calls
 * share one commit (and, in strict mode, one fsync) instead of paying one each.
 *
 * A failed commit loses its whole group. The in-memory chain heads then no longer match
 * the file, so the journal refuses every later write with `JOURNAL_WRITE_FAILED`
 * rather than write a broken chain; reopening the file restores a consistent state.
 */
export class GroupCommit {
  private queue: (() => void)[] = [];
  /** Flat `records` parameters of the group, {@link RECORD_COLUMNS} per row. */
  private rows: (string | number | null)[] = [];
  private readonly inserts: ReadonlyMap<number, Database.Statement>;
  private readonly begin: Database.Statement;
  private readonly end: Database.Statement;
  private readonly rollback: Database.Statement;
  private afterCommit: (() => void)[] = [];
  private waiters: Waiter[] = [];
  private scheduled = false;
  private failure: Error | undefined;
  private readonly commitGroup: () => void;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
  ) {
    this.begin = db.prepare("BEGIN");
    this.end = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
    const row = `(${Array.from({ length: RECORD_COLUMNS }, () => "?").join(", ")})`;
    this.inserts = new Map(
      CHUNKS.map((size) => [
        size,
        db.prepare(
          `INSERT INTO records (session_ref, seq, kind, call_id, data, prev_hash, hash) VALUES ${Array.from({ length: size }, () => row).join(", ")}`,
        ),
      ]),
    );
    this.commitGroup = () => {
      if (!db.inTransaction) this.begin.run();
      try {
        this.insertRows();
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
   * Queues one record row (inserted with the group's other rows in a few multi-row
   * statements), with the other writes it implies and what runs once it is committed.
   */
  enqueueRecord(row: RecordRow, also?: () => void, after?: () => void): void {
    for (const value of row) this.rows.push(value);
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
    return this.queue.length + this.rows.length;
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
        this.queue = [];
        this.rows = [];
        this.failure = journalError(
          JOURNAL_ERRORS.WRITE_FAILED,
          `journal ${JSON.stringify(this.file)}: a group commit failed (${cause instanceof Error ? cause.message : String(cause)}); the records of that group are lost and the journal accepts no more writes, reopen it`,
          { path: this.file },
          cause,
        );
        for (const waiter of waiters) waiter.reject(this.failure);
        throw this.failure;
      }
      this.queue = [];
      this.rows = [];
    }
    for (const run of after) run();
    for (const waiter of waiters) waiter.resolve();
  }

  private insertRows(): void {
    const rows = this.rows;
    let offset = 0;
    let left = rows.length / RECORD_COLUMNS;
    for (const size of CHUNKS) {
      const insert = this.inserts.get(size)!;
      for (; left >= size; left -= size, offset += size * RECORD_COLUMNS) {
        insert.run(rows.slice(offset, offset + size * RECORD_COLUMNS));
      }
    }
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
