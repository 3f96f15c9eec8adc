import type Database from "better-sqlite3";

/**
 * One group commit as plain data: what a transaction writes, whichever thread runs it
 * (the writer's own connection, or the commit thread's; see `commit-thread.ts`). Both
 * apply it with {@link GroupStatements}, so the two paths cannot write differently.
 */
export interface GroupWrites {
  /** `FRAME_COLUMNS` values per frame: id, session ref, first seq, previous frame, body. */
  readonly frames: (string | number | null)[];
  /**
   * `HEAD_COLUMNS` values per open session: ref, head frame, seq, hash, calls, open calls.
   * The hash is `null` where the commit thread hashes the session's lines (it fills it in).
   */
  readonly heads: (string | number | null)[];
  /**
   * `[ref, head]` pairs: the chain head of a session right before the first of its lines
   * the commit thread hashes, for a session whose earlier records it never saw (see
   * `GroupCommit.hashOnThread`). Empty for a group committed on the writer's thread.
   */
  readonly seeds: (string | number)[];
  /** The other writes, applied after the frames and heads, in order. */
  readonly ops: GroupOp[];
}

/** A write beside the frames: a session's row when it opens or closes, or a dropped head row. */
export type GroupOp =
  | readonly [op: "session", ref: number, sessionId: string, identity: string, workspace: string, bundleDir: string | null, openedAt: string]
  | readonly [op: "close", closedAt: string, seq: number, hash: string | null, finalFrame: number | null, calls: number, ref: number]
  | readonly [op: "drop", ref: number];

/**
 * The settings of a connection that commits groups (the writer's own, and the commit
 * thread's). A checkpoint every 2,500 WAL pages (40 MB at 16 KB pages) instead of
 * SQLite's 1,000: the table tails and the live-session rows are rewritten by every
 * commit but copied back once per checkpoint, and the checkpoint's fsyncs are paid less
 * often. A 16 MB page cache keeps those hot pages in memory. `temp_store = memory`:
 * statement journals never spill to a file. See README "Benchmark".
 */
export function writerPragmas(synchronous: "NORMAL" | "FULL"): readonly string[] {
  return [`synchronous = ${synchronous}`, `wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`, "cache_size = -16384", "temp_store = memory"];
}

/** The `-wal` pages past which a committing connection checkpoints (and the checkpoint thread restarts the `-wal`). */
export const WAL_CHECKPOINT_PAGES = 2500;

export const FRAME_COLUMNS = 5;
export const HEAD_COLUMNS = 6;
/**
 * Rows per multi-row INSERT. One statement per chunk instead of one per row saves the
 * per-statement binding and VDBE start-up; smaller chunks take the remainder so a group
 * never runs more than a few statements.
 */
const CHUNKS = [32, 8, 2, 1] as const;

/** The prepared statements of a group commit, on one connection. */
export class GroupStatements {
  private readonly frameInserts: ReadonlyMap<number, Database.Statement>;
  private readonly headUpserts: ReadonlyMap<number, Database.Statement>;
  private readonly session: Database.Statement;
  private readonly close: Database.Statement;
  private readonly dropHead: Database.Statement;
  private readonly begin: Database.Statement;
  private readonly end: Database.Statement;
  private readonly rollback: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.begin = db.prepare("BEGIN");
    this.end = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
    this.frameInserts = multiRow(db, "INSERT INTO frames (id, session_ref, first_seq, prev_frame, body)", FRAME_COLUMNS);
    this.headUpserts = multiRow(
      db,
      "INSERT OR REPLACE INTO live_sessions (ref, head_frame, seq, hash, calls, open_calls)",
      HEAD_COLUMNS,
    );
    this.session = db.prepare(
      "INSERT INTO sessions (ref, session_id, execution_identity, workspace, bundle_dir, opened_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.close = db.prepare(
      "UPDATE sessions SET closed_at = ?, final_seq = ?, final_hash = ?, final_frame = ?, final_calls = ? WHERE ref = ?",
    );
    this.dropHead = db.prepare("DELETE FROM live_sessions WHERE ref = ?");
  }

  /**
   * Writes the group in one transaction (joining one a lookup already opened on this
   * connection), and commits it. Throws, with nothing written, if any statement fails.
   */
  apply(writes: GroupWrites): void {
    if (!this.db.inTransaction) this.begin.run();
    try {
      insertChunks(this.frameInserts, writes.frames, FRAME_COLUMNS);
      insertChunks(this.headUpserts, writes.heads, HEAD_COLUMNS);
      for (const op of writes.ops) {
        if (op[0] === "session") this.session.run(op.slice(1));
        else if (op[0] === "close") this.close.run(op.slice(1));
        else this.dropHead.run(op[1]);
      }
      this.end.run();
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      throw error;
    }
  }

  /** Opens a transaction for lookups (reads until the next commit or `endRead`). */
  beginRead(): void {
    this.begin.run();
  }

  /** Ends a read transaction a lookup opened, so the connection's next read sees the newest commit. */
  endRead(): void {
    if (this.db.inTransaction) this.end.run();
  }
}

/** The characters of a group's frame bodies: about the bytes it adds to the `-wal`. */
export function bodyChars(writes: GroupWrites): number {
  let chars = 0;
  for (let index = FRAME_COLUMNS - 1; index < writes.frames.length; index += FRAME_COLUMNS) chars += (writes.frames[index] as string).length;
  return chars;
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
