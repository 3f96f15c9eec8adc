import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS, journalError } from "../errors.js";
import { writerPragmas } from "./sqlite-store.js";
import { folderReadOnlyError } from "./journal-path.js";
import { type CallPhase, CallTally, type OpenCallEntry } from "../records/call-phase.js";
import type { ApprovalDecider } from "../records/records.js";

/**
 * The schema version this package writes (`PRAGMA user_version`).
 *
 * @example
 * ```ts
 * SCHEMA_VERSION; // 2
 * ```
 */
export const SCHEMA_VERSION = 2;

/** Migrations, index `n` takes a database from version `n` to `n + 1`. Version 0 is an empty file. */
const MIGRATIONS: readonly (string | ((db: Database.Database) => void))[] = [
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
  migrateToFrames,
];

/** The page size of a new file. */
const FRAME_PAGE_SIZE = 16384;

/**
 * Schema v1 → v2: records move into frames (one per record; new commits write one per session per commit), every session gets its chain head (`live_sessions` while
 * open, `final_frame` once closed), and the per-record and per-call tables with their per-session indexes go (they cost most of a commit).
 */
function migrateToFrames(db: Database.Database): void {
  db.exec(`
    CREATE TABLE frames (id INTEGER PRIMARY KEY, session_ref INTEGER NOT NULL, first_seq INTEGER NOT NULL, prev_frame INTEGER, body TEXT NOT NULL);
    CREATE TABLE live_sessions (ref INTEGER PRIMARY KEY, head_frame INTEGER NOT NULL, seq INTEGER NOT NULL, hash TEXT NOT NULL, calls INTEGER NOT NULL, open_calls TEXT NOT NULL);
    ALTER TABLE sessions ADD COLUMN final_frame INTEGER;
    ALTER TABLE sessions ADD COLUMN final_calls INTEGER;
    INSERT INTO frames (id, session_ref, first_seq, prev_frame, body)
      SELECT id, session_ref, seq, lag(id) OVER (PARTITION BY session_ref ORDER BY seq), hash || ' ' || data FROM records;
    UPDATE sessions SET
      final_frame = (SELECT id FROM records r WHERE r.session_ref = sessions.ref ORDER BY seq DESC LIMIT 1),
      final_calls = (SELECT count(*) FROM calls c WHERE c.session_ref = sessions.ref)
      WHERE closed_at IS NOT NULL;
  `);
  const live = db
    .prepare<[], { ref: number; id: number; seq: number; hash: string; calls: number }>(
      `SELECT s.ref, r.id, r.seq, r.hash, (SELECT count(*) FROM calls c WHERE c.session_ref = s.ref) AS calls
         FROM sessions s JOIN records r ON r.session_ref = s.ref
        WHERE s.closed_at IS NULL AND r.seq = (SELECT max(seq) FROM records m WHERE m.session_ref = s.ref)`,
    )
    .all();
  const openCalls = db.prepare<[number], { call_id: string; requested_seq: number }>(
    "SELECT call_id, requested_seq FROM calls WHERE session_ref = ? AND open = 1 ORDER BY requested_seq",
  );
  const callRecords = db.prepare<[number, number, string], { kind: string; data: string }>(
    "SELECT kind, data FROM records WHERE session_ref = ? AND seq >= ? AND call_id = ? ORDER BY seq",
  );
  const insert = db.prepare("INSERT INTO live_sessions (ref, head_frame, seq, hash, calls, open_calls) VALUES (?, ?, ?, ?, ?, ?)");
  for (const session of live) {
    const open: Record<string, OpenCallEntry> = {};
    for (const call of openCalls.all(session.ref)) {
      const { phase, decidedBy } = progressOf(callRecords.all(session.ref, call.requested_seq, call.call_id));
      open[call.call_id] = decidedBy === undefined ? [phase] : [phase, decidedBy];
    }
    insert.run(session.ref, session.id, session.seq, session.hash, session.calls, JSON.stringify(open));
  }
  db.exec("DROP TABLE records; DROP TABLE calls;");
}
/** Opens (creating the file for a writer, whose lock made its folder) and migrates a journal database. */
export function openDatabase(file: string, mode: { readonly readonly: boolean; readonly synchronous: "NORMAL" | "FULL" }): Database.Database {
  const tooOld = unsupportedNode(process.versions.node);
  if (tooOld !== undefined)
    throw journalError(JOURNAL_ERRORS.OPEN_FAILED, `journal ${JSON.stringify(file)}: cannot open the database: ${tooOld}`, {
      path: file,
      reason: "node-version",
    });
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: mode.readonly, fileMustExist: mode.readonly });
    // Only an empty file takes a page size; see FRAME_PAGE_SIZE.
    if (!mode.readonly) db.pragma(`page_size = ${FRAME_PAGE_SIZE}`);
  } catch (cause) {
    if (mode.readonly) {
      const readOnlyFolder = folderReadOnlyError(file, cause);
      if (readOnlyFolder !== undefined) throw readOnlyFolder;
    }
    const binding = nativeBindingProblem(cause);
    if (binding !== undefined)
      throw journalError(
        JOURNAL_ERRORS.OPEN_FAILED,
        `journal ${JSON.stringify(file)}: cannot open the database: ${binding}`,
        { path: file, reason: "native-binding" },
        cause,
      );
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
      refuseReadOnlyConnection(db, file);
      db.pragma("journal_mode = WAL");
      for (const pragma of writerPragmas(mode.synchronous, db.pragma("page_size", { simple: true }) as number)) db.pragma(pragma);
    }
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > SCHEMA_VERSION)
      throw journalError(
        JOURNAL_ERRORS.SCHEMA_TOO_NEW,
        `journal ${JSON.stringify(file)}: schema version ${version} was written by a newer @openworker/journal (this one reads up to ${SCHEMA_VERSION}); upgrade the package`,
        { path: file, version, supported: SCHEMA_VERSION },
      );
    if (version === 0 && hasForeignTables(db))
      throw journalError(
        JOURNAL_ERRORS.NOT_A_JOURNAL,
        `journal ${JSON.stringify(file)}: the SQLite file holds other tables and is not a journal; choose another path`,
        { path: file },
      );
    if (version === 0 && mode.readonly) {
      const size = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
      throw journalError(
        JOURNAL_ERRORS.EMPTY,
        `journal ${JSON.stringify(file)}: ${size === 0 ? "the file is empty (0 bytes)" : "the file is a SQLite database without tables"}, not a journal yet (a writer opening it would make it one); check the path`,
        { path: file, bytes: size },
      );
    }
    if (version < SCHEMA_VERSION) {
      if (mode.readonly)
        throw journalError(
          JOURNAL_ERRORS.NEEDS_MIGRATION,
          `journal ${JSON.stringify(file)}: schema version ${version} must be migrated to ${SCHEMA_VERSION} by opening it once for writing`,
          { path: file, version, supported: SCHEMA_VERSION },
        );
      migrate(db);
    }
    return db;
  } catch (error) {
    db.close();
    if (isSqliteError(error)) {
      const readOnlyFolder = mode.readonly ? folderReadOnlyError(file, error) : undefined;
      if (readOnlyFolder !== undefined) throw readOnlyFolder;
    }
    throw openFailure(file, error);
  }
}
/** A writer's connection must be able to write. */
export function refuseReadOnlyConnection(db: Database.Database, file: string): void {
  try {
    db.exec("BEGIN IMMEDIATE");
    try {
      const version = db.pragma("user_version", { simple: true }) as number;
      db.pragma(`user_version = ${version}`);
    } finally {
      if (db.inTransaction) db.exec("ROLLBACK");
    }
  } catch (error) {
    if (!sqliteCode(error)?.startsWith("SQLITE_READONLY")) throw error;
    throw journalError(
      JOURNAL_ERRORS.OPEN_FAILED,
      `journal ${JSON.stringify(file)}: this process has no write permission on the file (SQLite could open it only read-only); grant write permission on it and on its -wal and -shm files (SQLite gives them the file's mode), or open it with { readonly: true } to read it`,
      { path: file },
      error,
    );
  }
}
/** What opening a journal met, as one of the journal's errors (its own pass as they are). */
export function openFailure(file: string, error: unknown): Error {
  if (OpenWorkerError.isInstance(error)) return error;
  const code = sqliteCode(error);
  const text = errorText(error);
  if (code?.startsWith("SQLITE_CORRUPT") || (code === "SQLITE_ERROR" && /^no such (column|table)\b/.test(text)))
    return journalError(
      JOURNAL_ERRORS.DAMAGED,
      `journal ${JSON.stringify(file)}: the database is damaged (${text}); restore it from a backup, or copy what SQLite can still read out of it (sqlite3's .recover) to a new file`,
      { path: file },
      error,
    );
  return journalError(JOURNAL_ERRORS.OPEN_FAILED, `journal ${JSON.stringify(file)}: not a readable journal database (${text})`, { path: file }, error);
}

function migrate(db: Database.Database): void {
  // IMMEDIATE: two writers opening an empty file at once must not both migrate it.
  db.transaction(() => {
    const current = db.pragma("user_version", { simple: true }) as number;
    for (let version = current; version < SCHEMA_VERSION; version += 1) {
      const step = MIGRATIONS[version]!;
      if (typeof step === "string") db.exec(step);
      else step(db);
    }
    db.prepare("INSERT OR REPLACE INTO journal_meta (key, value) VALUES (?, ?)").run(`migrated_${current}_to_${SCHEMA_VERSION}`, new Date().toISOString());
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

function hasForeignTables(db: Database.Database): boolean {
  return (db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'").get() as { n: number }).n > 0;
}

function isSqliteError(error: unknown): boolean {
  return error instanceof Error && error.name === "SqliteError";
}
/** A SqliteError's code (`SQLITE_CORRUPT`, `SQLITE_READONLY_…`), or `undefined` for any other error. */
function sqliteCode(error: unknown): string | undefined {
  if (!isSqliteError(error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}
/**
 * Why SQLite itself could not load, in words that say what to do: better-sqlite3 has no prebuilt binding for this platform and none was built from source, or the
 * binding it found does not load in this Node.js (a damaged install, or one built by hand for another Node.js).
 */
export function nativeBindingProblem(cause: unknown): string | undefined {
  const text = errorText(cause);
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === "MODULE_NOT_FOUND" && /better_sqlite3\.node|prebuilds[\\/]/.test(text)) {
    return (
      `better-sqlite3's native binding is not there for ${process.platform}-${process.arch} (it ships prebuilt bindings for Linux, macOS and Windows on x64 and arm64): ` +
      "reinstall it, or build it from source in its package folder with `npm run build-release`"
    );
  }
  if (code === "ERR_DLOPEN_FAILED" || text.includes("NODE_MODULE_VERSION")) {
    // Node's text spans lines ("The module …\nwas compiled against … NODE_MODULE_VERSION 115 …").
    const said = text.replace(/\s+/g, " ");
    return `better-sqlite3's native binding does not load in Node.js ${process.version} (${said.length > 400 ? `${said.slice(0, 400)}…` : said}); reinstall it, or build it from source for this Node.js in its package folder with \`npm run build-release\``;
  }
  return undefined;
}
/** The oldest Node.js the journal runs on: better-sqlite3's binding crashes the process on older ones. */
const OLDEST_NODE = [22, 12] as const;

/** Why this Node.js cannot run the journal, or `undefined` when it can. */
export function unsupportedNode(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major > OLDEST_NODE[0] || (major === OLDEST_NODE[0] && minor >= OLDEST_NODE[1])) return undefined;
  return `the journal needs Node.js ${OLDEST_NODE.join(".")} or later and this is Node.js v${version}: run the host on Node.js 22 or 24`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
/** The phase (and decider) of an open v1 call, from its records in order. */
function progressOf(records: readonly { kind: string; data: string }[]): { phase: CallPhase; decidedBy?: ApprovalDecider } {
  const tally = new CallTally();
  for (const record of records) tally.add({ ...(JSON.parse(record.data) as Record<string, unknown>), kind: record.kind, callId: "call" });
  const [phase = "requested", decidedBy] = tally.open.get("call") ?? [];
  return decidedBy === undefined ? { phase } : { phase, decidedBy };
}
