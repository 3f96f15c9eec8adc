import type Database from "better-sqlite3";
import path from "node:path";
import type { ApprovalFilter, ApprovalGrant, ApprovalKey, ApprovalRecord } from "./store/approvals.js";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import { GroupCommit } from "./write/group-commit.js";
import type {
  ApprovalDecidedInput,
  CallFinishedInput,
  CallProgressInput,
  CallRef,
  CallRequestedInput,
  RevokedInput,
  SessionOpenedInput,
  TurnFinishedInput,
  TurnPreparedInput,
} from "./records/inputs.js";
import { refuseNonRegularFile } from "./store/journal-path.js";
import { LiveState } from "./write/live-state.js";
import { type CallSummary, JournalReader, type SessionSummary } from "./read/reader.js";
import type { JournalRecord } from "./records/records.js";
import { type InterruptedCall, recoverInterruptedCalls } from "./write/recovery.js";
import { openDatabase, openFailure } from "./store/schema.js";
import { SqliteStore } from "./store/sqlite-store.js";
import { removeLegacyTail, replayLegacyTail } from "./write/legacy-tail.js";
import { verifyChains, type VerifyReport } from "./verify/verify.js";
import type { JournalWarning } from "./warnings.js";
import { WriterLock } from "./store/writer-lock.js";
import { JournalWriter } from "./write/writer.js";

/**
 * How hard a commit holds on (the package README states the contract in full):
 * - `grouped` (default): WAL with `synchronous=NORMAL`. Records queued in one turn of the
 *   event loop commit in one transaction; `callStarted` resolves once that transaction
 *   committed. Everything committed survives kill -9 of the process; on power loss the
 *   newest commits may be lost, never torn.
 * - `strict`: WAL with `synchronous=FULL`: each commit is fsynced before it is
 *   acknowledged, so nothing acknowledged is lost even on power loss.
 *
 * @example
 * ```ts
 * const journal = Journal.open({ path, durability: "strict" });
 * ```
 */
export type Durability = "grouped" | "strict";

/**
 * How to open a journal.
 *
 * @example
 * ```ts
 * const reader = Journal.open({ path: ".openworker/journal.db", readonly: true });
 * ```
 */
export interface JournalOptions {
  /** The database file; its folders are created for a writer. */
  readonly path: string;
  readonly durability?: Durability;
  /** Open as a reader beside a running writer (another process or this one): no recovery, no writes. */
  readonly readonly?: boolean;
}

/**
 * The durable record of every session, approval and call (A3), with the approval store
 * (A2, M3). One process writes a journal file; any number of readers may open it beside
 * the writer. Writes are synchronous: each record is checked, hashed onto its
 * session's chain and queued at once; everything queued in one turn of the event loop
 * commits in one SQLite transaction. `callStarted` resolves once the transaction holding
 * its record committed (see {@link Durability}), so the runtime awaits it before running
 * the tool: a start the runtime was told about survives kill -9, and under `strict`
 * power loss.
 *
 * Model-context facts (L2) have no method here: they are never journaled.
 *
 * @example
 * ```ts
 * const journal = Journal.open({ path: ".openworker/journal.db" });
 * for (const call of journal.recovered) console.warn(`interrupted: ${call.qualifiedName}`);
 * journal.callRequested({ sessionId, turnId, callId, alias, qualifiedName, args, argsDigest: argumentsDigest(args) });
 * journal.approvalDecided({ sessionId, callId, decision: "approved", by: "person", scope: "once", key });
 * await journal.callStarted({ sessionId, callId });
 * journal.callFinished({ sessionId, callId, outcome: "succeeded", result });
 * journal.close();
 * ```
 */
export class Journal {
  readonly path: string;
  readonly durability: Durability;
  readonly readonly: boolean;
  /** Calls found without a terminal record at open, now marked `interrupted`; empty for a reader. */
  readonly recovered: readonly InterruptedCall[];
  /**
   * What opening as the writer found and could not put right (empty for a reader, and for
   * a file only this package wrote): records of a legacy tail log that could not be
   * replayed, a head row claiming an open call its chain contradicts (dropped, nothing
   * appended), a head row that cannot be read. See {@link JournalWarning}.
   */
  readonly warnings: readonly JournalWarning[];
  private closed = false;

  private constructor(
    private readonly store: SqliteStore,
    options: {
      path: string;
      durability: Durability;
      readonly: boolean;
      recovered: readonly InterruptedCall[];
      warnings: readonly JournalWarning[];
    },
    private readonly reader: JournalReader,
    private readonly writer: { writer: JournalWriter; commit: GroupCommit; lock: WriterLock } | undefined,
  ) {
    this.path = options.path;
    this.durability = options.durability;
    this.readonly = options.readonly;
    this.recovered = Object.freeze([...options.recovered]);
    this.warnings = Object.freeze([...options.warnings]);
  }

  /**
   * Opens (creating and migrating if needed) a journal. A writer then replays a legacy
   * tail log left beside the file, if any, and recovers: every call a crash left open is marked `interrupted` and listed in
   * {@link recovered}; what it could not put right is in {@link warnings}.
   * Throws `JOURNAL_OPEN_FAILED` (also for a legacy tail log `<path>-tail` that is a
   * directory or cannot be read, and when recovery cannot commit, e.g. the disk is full), `JOURNAL_NOT_A_FILE` (the path is a directory, a device
   * such as `/dev/null`, a FIFO), `JOURNAL_NOT_A_JOURNAL`, `JOURNAL_SCHEMA_TOO_NEW`, or for
   * a reader `JOURNAL_NEEDS_MIGRATION` (an older schema), `JOURNAL_EMPTY` (an empty file)
   * and `JOURNAL_FOLDER_READ_ONLY` (SQLite cannot create the `-shm` file it needs beside
   * the journal).
   */
  static open(options: JournalOptions): Journal {
    const durability = options.durability ?? "grouped";
    if (durability !== "grouped" && durability !== "strict") {
      throw journalError(
        JOURNAL_ERRORS.INVALID_RECORD,
        `journal ${JSON.stringify(options.path)}: durability must be "grouped" or "strict", got ${JSON.stringify(durability)}`,
        { field: "durability" },
      );
    }
    const readonly = options.readonly === true;
    refuseNonRegularFile(options.path);
    // A writer takes the lock (making the journal's folder) before it migrates, replays or
    // recovers anything.
    const lock = readonly ? undefined : WriterLock.acquire(options.path);
    const synchronous = durability === "strict" ? "FULL" : "NORMAL";
    let db: Database.Database;
    try {
      db = openDatabase(options.path, { readonly, synchronous });
    } catch (error) {
      lock?.release();
      throw error;
    }
    try {
      const store = new SqliteStore(db, !readonly);
      const reader = new JournalReader(db);
      if (readonly) return new Journal(store, { path: options.path, durability, readonly, recovered: [], warnings: [] }, reader, undefined);
      const commit = new GroupCommit(store, options.path);
      const state = new LiveState(store, (read) => commit.lookup(read), () => commit.commitNow());
      const writer = new JournalWriter(commit, state);
      // Absolute: the host may change its working folder later.
      const tailFile = path.resolve(options.path);
      const { recovered, warnings } = recoverOrExplain(options.path, () => {
        // What a crash left only in a legacy tail log is committed first, so recovery sees it.
        const replayWarnings = replayLegacyTail(writer, tailFile);
        commit.commitNow();
        const found = recoverInterruptedCalls(store, state, writer, commit);
        return { recovered: found.recovered, warnings: [...replayWarnings, ...found.warnings] };
      });
      removeLegacyTail(tailFile);
      return new Journal(store, { path: options.path, durability, readonly, recovered, warnings }, reader, { writer, commit, lock: lock! });
    } catch (error) {
      db.close();
      lock?.release();
      // Reading the file (its tables, its sessions) can meet a damaged database: SQLite's
      // error becomes the journal's, like one met while opening it.
      throw openFailure(options.path, error);
    }
  }

  /** Records a session's start under its execution identity (A2). */
  sessionOpened(record: SessionOpenedInput): void {
    this.write().sessionOpened(record);
  }

  turnPrepared(record: TurnPreparedInput): void {
    this.write().turnPrepared(record);
  }

  /** Records a call the model asked for; `argsDigest` must be `argumentsDigest(args)`. */
  callRequested(record: CallRequestedInput): void {
    this.write().callRequested(record);
  }

  /** Records the approval decision of a requested call: exactly one per call (A1). */
  approvalDecided(record: ApprovalDecidedInput): void {
    this.write().approvalDecided(record);
  }

  /**
   * Records that an approved call starts. Resolves once the record is committed (grouped
   * with concurrent ones); await it before running the tool, so no effect can precede
   * its journal entry.
   */
  callStarted(record: CallRef): Promise<void> {
    try {
      return this.write().callStarted(record);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  callProgress(record: CallProgressInput): void {
    this.write().callProgress(record);
  }

  /** The one terminal record of a call; a second throws `JOURNAL_TERMINAL_EXISTS` (A3). */
  callFinished(record: CallFinishedInput): void {
    this.write().callFinished(record);
  }

  revoked(record: RevokedInput): void {
    this.write().revoked(record);
  }

  turnFinished(record: TurnFinishedInput): void {
    this.write().turnFinished(record);
  }

  /** Closes a session; refused with `JOURNAL_CALLS_OPEN` while a call has no terminal record. */
  sessionClosed(record: { readonly sessionId: string }): void {
    this.write().sessionClosed(record);
  }

  /** Resolves once everything queued so far is committed. */
  flush(): Promise<void> {
    if (this.closed || this.writer === undefined) return Promise.resolve();
    return this.writer.commit.whenCommitted();
  }

  /** Commits what is queued and closes the file. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.writer?.commit.commitNow();
    } finally {
      this.store.close();
      this.writer?.lock.release();
    }
  }

  /** A session-scope approval for the key, else a `once` approval for its exact `argsDigest` (M3). */
  findApproval(key: ApprovalKey): ApprovalRecord | undefined {
    if (this.closed) throw closedError(this.path);
    // Hot path: approvals are stored at once, never queued, so there is nothing to
    // commit first; the lookup joins the group's transaction instead of paying for its own.
    return this.writer === undefined ? this.store.approvals.find(key) : this.writer.commit.lookup(() => this.store.approvals.find(key));
  }

  /** Like {@link findApproval}, but a `once` approval is used up by the lookup. */
  consumeApproval(key: ApprovalKey): ApprovalRecord | undefined {
    this.write();
    this.writer?.commit.commitNow();
    return this.store.approvals.consume(key);
  }

  /**
   * Stores an approval, effective at once. Queued records are committed first, so the
   * `approval_decided` record that explains an approval is never younger than it.
   */
  storeApproval(key: ApprovalKey, record: ApprovalGrant): void {
    this.write();
    this.writer?.commit.commitNow();
    this.store.approvals.store(key, record);
  }

  /**
   * The remembered approvals (those stored with `storeApproval`: `session` scope, and
   * `once` approvals not yet used), oldest first, of one execution identity and/or tool.
   * Readers may list them beside the writer.
   */
  approvals(filter: ApprovalFilter = {}): ApprovalRecord[] {
    this.read();
    return this.store.approvals.list(filter);
  }

  /**
   * Forgets remembered approvals, effective at once: the next call of a matching tool
   * asks again. Returns how many were forgotten. `{}` forgets every one. The journal's
   * records (the `approval_decided` of past calls) are history and stay.
   */
  revokeApprovals(filter: ApprovalFilter): number {
    this.write();
    this.writer?.commit.commitNow();
    return this.store.approvals.revoke(filter);
  }

  sessions(): SessionSummary[] {
    this.read();
    return this.reader.sessions();
  }

  session(sessionId: string): SessionSummary | undefined {
    this.read();
    return this.reader.session(sessionId);
  }

  calls(sessionId: string): CallSummary[] {
    this.read();
    return this.reader.calls(sessionId);
  }

  /**
   * Every record of one call, in order: requested, decision, started, progress, terminal.
   * Call ids are unique within their session, so the call is named by both.
   */
  timeline(call: CallRef): JournalRecord[] {
    this.read();
    return this.reader.timeline(call);
  }

  /** The session's records in chain order. */
  records(sessionId: string): Iterable<JournalRecord> {
    this.read();
    return this.reader.records(sessionId);
  }

  /**
   * The session as JSON lines, one record per line (canonical JSON, with `prevHash` and
   * `hash`): drop those two keys, canonicalize, and `sha256(prevHash + text)` gives `hash`.
   */
  exportSession(sessionId: string): Iterable<string> {
    this.read();
    return this.reader.exportSession(sessionId);
  }

  /**
   * Checks every chain (or one session's) and reports the first broken or missing link,
   * or index cell that disagrees with the hashed records. Beside a writer, it reads in
   * short transactions (the WAL is checkpointed meanwhile) and checks the file as it stood
   * when it began: what is committed after that is beyond what is checked. Never throws for
   * what it finds in the file.
   */
  verify(sessionId?: string): VerifyReport {
    this.read();
    return verifyChains(this.store.database, sessionId);
  }

  private write(): JournalWriter {
    if (this.closed) throw closedError(this.path);
    if (this.writer === undefined) {
      throw journalError(
        JOURNAL_ERRORS.READ_ONLY,
        `journal ${JSON.stringify(this.path)} was opened read-only; open it without readonly to write`,
        { path: this.path },
      );
    }
    return this.writer.writer;
  }

  // A writer's reads see its own queued records: commit them first.
  private read(): void {
    if (this.closed) throw closedError(this.path);
    this.writer?.commit.commitNow();
  }
}

function closedError(file: string) {
  return journalError(JOURNAL_ERRORS.CLOSED, `journal ${JSON.stringify(file)} is closed; open it again to use it`, { path: file });
}

/**
 * Runs what opening as the writer writes (replay, recovery). A commit that fails there
 * (the disk is full, the folder read-only) lost nothing: the file holds everything it
 * held, and the next open tries again.
 */
function recoverOrExplain<T>(file: string, recover: () => T): T {
  try {
    return recover();
  } catch (error) {
    if (!OpenWorkerError.hasCode(error, JOURNAL_ERRORS.WRITE_FAILED)) throw error;
    const cause = (error as { cause?: unknown }).cause;
    throw journalError(
      JOURNAL_ERRORS.OPEN_FAILED,
      `journal ${JSON.stringify(file)}: recovery could not commit its records (${cause instanceof Error ? cause.message : String(cause)}); nothing in the file was lost: free disk space (or fix what stops writing) and open it again`,
      { path: file },
      cause,
    );
  }
}
