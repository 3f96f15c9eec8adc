import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { JOURNAL_ERRORS, journalError } from "./errors.js";

/**
 * The schema version this package writes (`PRAGMA user_version`).
 *
 * @example
 * ```ts
 * SCHEMA_VERSION; // 1
 * ```
 */
export const SCHEMA_VERSION = 1;

/**
 * Migrations, index `n` takes a database from version `n` to `n + 1`. Version 0 is an
 * empty file. A released migration never changes: frozen databases in `test/fixtures/`
 * prove every old version still opens.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE journal_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE sessions (
    ref INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE,
    execution_identity TEXT NOT NULL,
    workspace TEXT NOT NULL,
    bundle_dir TEXT,
    opened_at TEXT NOT NULL,
    closed_at TEXT,
    final_seq INTEGER,
    final_hash TEXT
  );
  CREATE TABLE records (
    id INTEGER PRIMARY KEY,
    session_ref INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    call_id TEXT,
    data TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
  );
  CREATE UNIQUE INDEX records_by_session ON records (session_ref, seq);
  CREATE TABLE calls (
    call_id TEXT PRIMARY KEY,
    session_ref INTEGER NOT NULL,
    turn_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    args_digest TEXT NOT NULL,
    requested_seq INTEGER NOT NULL,
    decision TEXT,
    decided_by TEXT,
    started INTEGER NOT NULL DEFAULT 0,
    outcome TEXT,
    code TEXT,
    open INTEGER NOT NULL DEFAULT 1
  ) WITHOUT ROWID;
  CREATE INDEX calls_by_session ON calls (session_ref, requested_seq);
  CREATE INDEX calls_open ON calls (open) WHERE open = 1;
  CREATE TABLE approvals (
    execution_identity TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    schema_fingerprint TEXT NOT NULL,
    args_digest TEXT NOT NULL,
    scope TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    who TEXT,
    decided_at TEXT NOT NULL,
    PRIMARY KEY (execution_identity, qualified_name, schema_fingerprint, args_digest)
  ) WITHOUT ROWID;
  `,
];

/**
 * Writer tuning (see README "Benchmark"). A checkpoint every 10,000 WAL pages (~40 MB)
 * instead of SQLite's 1,000: the hot pages (each live session's index leaf, the table
 * tail) are rewritten many times between checkpoints but copied back once, and the
 * checkpoint's fsyncs are paid seven times less often on the writer's thread. A 16 MB
 * page cache keeps those hot pages and the calls table's recent leaves in memory.
 * `temp_store = memory`: the multi-row record INSERT keeps a statement journal, which
 * otherwise spills to a temporary file (measured: 50 % more write syscalls).
 */
const WRITER_PRAGMAS = ["wal_autocheckpoint = 10000", "cache_size = -16384", "temp_store = memory"] as const;

/** How a database is opened: as the one writer, or as a reader beside it. */
export interface OpenMode {
  readonly readonly: boolean;
  readonly synchronous: "NORMAL" | "FULL";
}

/**
 * Opens (creating folders and file for a writer) and migrates a journal database.
 * A reader never migrates: it refuses an older schema instead of changing the file
 * under a writer.
 */
export function openDatabase(file: string, mode: OpenMode): Database.Database {
  let db: Database.Database;
  try {
    if (!mode.readonly) mkdirSync(path.dirname(file), { recursive: true });
    db = new Database(file, { readonly: mode.readonly, fileMustExist: mode.readonly });
  } catch (cause) {
    throw journalError(
      JOURNAL_ERRORS.OPEN_FAILED,
      `journal ${JSON.stringify(file)}: cannot open the database (${errorText(cause)}); check the path and its permissions`,
      { path: file },
      cause,
    );
  }
  try {
    db.pragma("busy_timeout = 5000");
    if (!mode.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${mode.synchronous}`);
      for (const pragma of WRITER_PRAGMAS) db.pragma(pragma);
    }
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw journalError(
        JOURNAL_ERRORS.SCHEMA_TOO_NEW,
        `journal ${JSON.stringify(file)}: schema version ${version} was written by a newer @openworker/journal (this one reads up to ${SCHEMA_VERSION}); upgrade the package`,
        { path: file, version, supported: SCHEMA_VERSION },
      );
    }
    if (version === 0 && hasForeignTables(db)) {
      throw journalError(
        JOURNAL_ERRORS.NOT_A_JOURNAL,
        `journal ${JSON.stringify(file)}: the SQLite file holds other tables and is not a journal; choose another path`,
        { path: file },
      );
    }
    if (version < SCHEMA_VERSION) {
      if (mode.readonly) {
        throw journalError(
          JOURNAL_ERRORS.NEEDS_MIGRATION,
          `journal ${JSON.stringify(file)}: schema version ${version} must be migrated to ${SCHEMA_VERSION} by opening it once for writing`,
          { path: file, version, supported: SCHEMA_VERSION },
        );
      }
      migrate(db);
    }
    return db;
  } catch (error) {
    db.close();
    if (isSqliteError(error)) {
      throw journalError(
        JOURNAL_ERRORS.OPEN_FAILED,
        `journal ${JSON.stringify(file)}: not a readable journal database (${errorText(error)})`,
        { path: file },
        error,
      );
    }
    throw error;
  }
}

function migrate(db: Database.Database): void {
  // IMMEDIATE: two writers opening an empty file at once must not both migrate it.
  db.transaction(() => {
    const current = db.pragma("user_version", { simple: true }) as number;
    for (let version = current; version < SCHEMA_VERSION; version += 1) {
      db.exec(MIGRATIONS[version]!);
    }
    db.prepare("INSERT OR REPLACE INTO journal_meta (key, value) VALUES (?, ?)").run(
      `migrated_${current}_to_${SCHEMA_VERSION}`,
      new Date().toISOString(),
    );
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

function hasForeignTables(db: Database.Database): boolean {
  const row = db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'").get() as { n: number };
  return row.n > 0;
}

function isSqliteError(error: unknown): boolean {
  return error instanceof Error && error.name === "SqliteError";
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
