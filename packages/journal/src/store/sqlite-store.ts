import type Database from "better-sqlite3";
import { ApprovalStore } from "./approvals.js";
import { type ChainHead, FrameReader } from "./frames.js";
import type { GroupWrites, JournalStore, StoredSession } from "./store.js";

/** The writer's connection: WAL, `synchronous` as the durability says (NORMAL survives kill -9, FULL power loss). */
export function writerPragmas(synchronous: "NORMAL" | "FULL", pageSize: number): readonly string[] {
  return [`synchronous = ${synchronous}`, `wal_autocheckpoint = ${Math.ceil(WAL_CHECKPOINT_BYTES / pageSize)}`, "cache_size = -16384", "temp_store = memory"];
}
/** SQLite checkpoints the WAL itself past about 160 MB; the store does first, every 8 Mi characters of records committed. */
export const WAL_CHECKPOINT_BYTES = 160 * 1024 * 1024;
const CHECKPOINT_AFTER_CHARS = 8 * 1024 * 1024;

const FRAME_COLUMNS = 5;
const HEAD_COLUMNS = 6;
/** Rows per multi-row insert: a group of a few hundred frames takes a handful of statements. */
const CHUNKS = [32, 8, 2, 1] as const;

/** The embedded store: one SQLite file in WAL mode (schema in `schema.ts`). */
export class SqliteStore implements JournalStore {
  readonly approvals: ApprovalStore;
  private readonly frames: FrameReader;
  private readonly frameInserts: ReadonlyMap<number, Database.Statement>;
  private readonly headUpserts: ReadonlyMap<number, Database.Statement>;
  private readonly sql;
  private sinceCheckpoint = 0;
  private checkpointQueued = false;

  /** `db`: the connection, for the SQLite-specific readers (`JournalReader`, `verify()`). */
  constructor(readonly db: Database.Database) {
    this.approvals = new ApprovalStore(db);
    this.frames = new FrameReader(db);
    this.frameInserts = multiRow(db, "INSERT INTO frames (id, session_ref, first_seq, prev_frame, body)", FRAME_COLUMNS);
    this.headUpserts = multiRow(
      db,
      "INSERT INTO live_sessions (ref, head_frame, seq, hash, calls, open_calls)",
      HEAD_COLUMNS,
      " ON CONFLICT (ref) DO UPDATE SET head_frame = excluded.head_frame, seq = excluded.seq, hash = excluded.hash, calls = excluded.calls, open_calls = excluded.open_calls",
    );
    this.sql = {
      begin: db.prepare("BEGIN"),
      end: db.prepare("COMMIT"),
      rollback: db.prepare("ROLLBACK"),
      session: db.prepare<[string], StoredSession>(
        `SELECT s.ref, s.execution_identity AS executionIdentity, s.closed_at AS closedAt, l.head_frame AS headFrame, l.seq, l.hash, l.calls, l.open_calls AS openCalls
           FROM sessions s LEFT JOIN live_sessions l ON l.ref = s.ref WHERE s.session_id = ?`,
      ),
      open: db.prepare<[], { session_id: string }>(
        "SELECT s.session_id FROM live_sessions l JOIN sessions s ON s.ref = l.ref WHERE l.open_calls <> '{}' ORDER BY l.ref",
      ),
      maxRef: db.prepare<[], { id: number | null }>("SELECT max(ref) AS id FROM sessions"),
      maxFrame: db.prepare<[], { id: number | null }>("SELECT max(id) AS id FROM frames"),
      insertSession: db.prepare("INSERT INTO sessions (ref, session_id, execution_identity, workspace, bundle_dir, opened_at) VALUES (?, ?, ?, ?, ?, ?)"),
      close: db.prepare("UPDATE sessions SET closed_at = ?, final_seq = ?, final_hash = ?, final_frame = ?, final_calls = ? WHERE ref = ?"),
      dropHead: db.prepare("DELETE FROM live_sessions WHERE ref = ?"),
    };
  }
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }
  session(sessionId: string): StoredSession | undefined {
    return this.sql.session.get(sessionId);
  }

  lastRef(): number {
    return this.sql.maxRef.get()?.id ?? 0;
  }
  lastFrame(): number {
    return this.sql.maxFrame.get()?.id ?? 0;
  }
  sessionsWithOpenCalls(): string[] {
    return this.sql.open.all().map((row) => row.session_id);
  }
  newestFirst(head: ChainHead): Iterable<string> {
    return this.frames.newestFirst(head);
  }
  commit(group: GroupWrites): void {
    if (!this.db.inTransaction) this.sql.begin.run();
    try {
      insertChunks(this.frameInserts, group.frames, FRAME_COLUMNS);
      insertChunks(this.headUpserts, group.heads, HEAD_COLUMNS);
      for (const op of group.ops) {
        if (op[0] === "session") this.sql.insertSession.run(op.slice(1));
        else if (op[0] === "close") this.sql.close.run(op.slice(1));
        else this.sql.dropHead.run(op[1]);
      }
      this.sql.end.run();
    } catch (error) {
      if (this.db.inTransaction) this.sql.rollback.run();
      throw error;
    }
    for (let index = FRAME_COLUMNS - 1; index < group.frames.length; index += FRAME_COLUMNS) this.sinceCheckpoint += (group.frames[index] as string).length;
    // A checkpoint runs in a turn of its own, once the starts this commit acknowledged went on their way. One that cannot write now (a full
    // disk) loses nothing: the WAL keeps the pages, and the next commit that fails says so.
    if (this.sinceCheckpoint < CHECKPOINT_AFTER_CHARS || this.checkpointQueued) return;
    this.checkpointQueued = true;
    setImmediate(() => {
      this.checkpointQueued = false;
      this.sinceCheckpoint = 0;
      try {
        if (this.db.open && !this.db.inTransaction) this.db.pragma("wal_checkpoint(PASSIVE)");
      } catch {
        // See above: the WAL keeps the pages.
      }
    });
  }
  beginRead(): void {
    this.sql.begin.run();
  }
  endRead(): void {
    if (this.db.inTransaction) this.sql.end.run();
  }
  close(): void {
    this.db.close();
  }
}

function multiRow(db: Database.Database, head: string, columns: number, tail = ""): ReadonlyMap<number, Database.Statement> {
  const row = `(${Array.from({ length: columns }, () => "?").join(", ")})`;
  return new Map(CHUNKS.map((size) => [size, db.prepare(`${head} VALUES ${Array.from({ length: size }, () => row).join(", ")}${tail}`)]));
}

function insertChunks(inserts: ReadonlyMap<number, Database.Statement>, values: readonly unknown[], columns: number): void {
  let offset = 0;
  let left = values.length / columns;
  for (const size of CHUNKS) {
    const insert = inserts.get(size)!;
    for (; left >= size; left -= size, offset += size * columns) insert.run(values.slice(offset, offset + size * columns));
  }
}
