import type Database from "better-sqlite3";
import path from "node:path";
import { type ApprovalFilter, type ApprovalGrant, type ApprovalKey, type ApprovalRecord, ApprovalStore } from "./approvals.js";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import { type CommitThreadMode, GroupCommit, THREAD_AFTER_COMMIT_SHARE } from "./group-commit.js";
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
} from "./inputs.js";
import { refuseNonRegularFile } from "./journal-path.js";
import { LiveState } from "./live-state.js";
import { type CallSummary, JournalReader, type SessionSummary } from "./reader.js";
import type { JournalRecord } from "./records.js";
import { type InterruptedCall, recoverInterruptedCalls } from "./recovery.js";
import { openDatabase, openFailure } from "./schema.js";
import { TailLog } from "./tail-log.js";
import { replayTailLog } from "./tail-replay.js";
import { verifyChains, type VerifyReport } from "./verify.js";
import type { JournalWarning } from "./warnings.js";
import { WriterLock } from "./writer-lock.js";
import { JournalWriter } from "./writer.js";

/**
 * How hard each group commit holds on (see the package README for the full contract):
 * - `grouped` (default): a start is made durable by one `write()` of the queued records
 *   to the tail log (`<path>-tail`); groups commit to a WAL with `synchronous=NORMAL`
 *   within 10 ms. Every acknowledged start and everything committed survives a process
 *   crash (kill -9; the tail log is replayed at the next open); on power loss the last
 *   records before the WAL was synced may be lost, never torn.
 * - `strict`: WAL with `synchronous=FULL`: each group commit is fsynced before it is
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
  /**
   * Where a writer's group commits run (see the README, "Commit thread"): `"auto"`
   * (default) on its own thread until it is busy, then on a commit thread (grouped
   * durability only: under strict, each start waits for its commit anyway); `"always"` on
   * a commit thread from the start (`JOURNAL_OPEN_FAILED` if it cannot start); `"never"`
   * on its own thread.
   */
  readonly commitThread?: CommitThreadMode;
  /**
   * Under `commitThread: "auto"`, the share of the writer's time spent building and
   * committing groups (in two of three 100 ms windows, while its event loop is busy at
   * least 90 % of the time) at which the thread starts. Default 0.2; between 0 and 1.
   * A lower value starts it sooner (tests use it to start the thread under any load).
   */
  readonly commitThreadShare?: number;
}

/**
 * The durable record of every session, approval and call (A3), with the approval store
 * (A2, M3). One process writes a journal file; any number of readers may open it beside
 * the writer. Writes are synchronous to queue, hashed onto their session's chain at
 * once, and committed together in groups; `callStarted` resolves once its record is
 * durable (written to the tail log under `grouped`, committed under `strict`), so the
 * runtime awaits it before running the tool.
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
   * a file only this package wrote): tail-log records that could not be replayed (a lost
   * `-wal`), a head row claiming an open call its chain contradicts (dropped, nothing
   * appended), a head row that cannot be read. See {@link JournalWarning}.
   */
  readonly warnings: readonly JournalWarning[];
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    options: {
      path: string;
      durability: Durability;
      readonly: boolean;
      recovered: readonly InterruptedCall[];
      warnings: readonly JournalWarning[];
    },
    private readonly reader: JournalReader,
    private readonly approvalStore: ApprovalStore,
    private readonly writer: { writer: JournalWriter; commit: GroupCommit; tail: TailLog | undefined; lock: WriterLock } | undefined,
  ) {
    this.path = options.path;
    this.durability = options.durability;
    this.readonly = options.readonly;
    this.recovered = Object.freeze([...options.recovered]);
    this.warnings = Object.freeze([...options.warnings]);
  }

  /**
   * Opens (creating and migrating if needed) a journal. A writer then replays its tail
   * log and recovers: every call a crash left open is marked `interrupted` and listed in
   * {@link recovered}; what it could not put right is in {@link warnings}.
   * Throws `JOURNAL_OPEN_FAILED` (also for a tail log `<path>-tail` that is a directory or
   * cannot be read), `JOURNAL_NOT_A_FILE` (the path is a directory, a device
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
    const commitThread = options.commitThread ?? "auto";
    const threadShare = commitThreadShareOf(options.commitThreadShare, options.path);
    if (commitThread !== "auto" && commitThread !== "always" && commitThread !== "never") {
      throw journalError(
        JOURNAL_ERRORS.INVALID_RECORD,
        `journal ${JSON.stringify(options.path)}: commitThread must be "auto", "always" or "never", got ${JSON.stringify(commitThread)}`,
        { field: "commitThread" },
      );
    }
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
      const reader = new JournalReader(db);
      const approvals = new ApprovalStore(db, !readonly);
      if (readonly) {
        return new Journal(db, { path: options.path, durability, readonly, recovered: [], warnings: [] }, reader, approvals, undefined);
      }
      const commit = new GroupCommit(db, options.path, synchronous, commitThread, threadShare);
      const state = new LiveState(db, (read) => commit.lookup(read), () => commit.commitNow());
      commit.storedHead = (session) => state.storedHead(session);
      const writer = new JournalWriter(commit, state);
      // What a crash left only in the tail log is committed first, so recovery sees it.
      // Absolute: the commit thread opens it too, and the host may change its working folder.
      const tailFile = `${path.resolve(options.path)}-tail`;
      const replayWarnings = replayTailLog(writer, tailFile);
      commit.commitNow();
      const { recovered, warnings } = recoverInterruptedCalls(db, state, writer, commit);
      const tail = durability === "grouped" ? TailLog.open(tailFile) : undefined;
      if (tail !== undefined) commit.useTail(tail);
      else TailLog.remove(tailFile);
      if (commitThread === "always") {
        try {
          commit.startThreadNow();
        } catch (error) {
          // Everything is committed: the (empty) tail log goes with the refused open.
          tail?.close(true);
          throw error;
        }
      }
      return new Journal(
        db,
        { path: options.path, durability, readonly, recovered, warnings: [...replayWarnings, ...warnings] },
        reader,
        approvals,
        { writer, commit, tail, lock: lock! },
      );
    } catch (error) {
      db.close();
      lock?.release();
      // Reading the file (its tables, its sessions, its tail log) can meet a damaged
      // database: SQLite's error becomes the journal's, like one met while opening it.
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

  /**
   * Where this writer's group commits run now: `"inline"` (its own thread), `"thread"`
   * (the commit thread) or `"starting"` (its own thread while the commit thread starts);
   * `"inline"` for a reader.
   */
  get commits(): "inline" | "starting" | "thread" {
    return this.writer?.commit.where ?? "inline";
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
    let committed = false;
    try {
      this.writer?.commit.commitNow();
      committed = true;
    } finally {
      this.writer?.commit.stop();
      // Emptied only once everything is committed: after a failed commit the next open replays it.
      this.writer?.tail?.close(committed);
      this.db.close();
      this.writer?.lock.release();
    }
  }

  /** A session-scope approval for the key, else a `once` approval for its exact `argsDigest` (M3). */
  findApproval(key: ApprovalKey): ApprovalRecord | undefined {
    if (this.closed) throw closedError(this.path);
    // Hot path: approvals are stored at once, never queued, so there is nothing to
    // commit first; the lookup joins the group's transaction instead of paying for its own.
    return this.writer === undefined ? this.approvalStore.find(key) : this.writer.commit.lookup(() => this.approvalStore.find(key));
  }

  /** Like {@link findApproval}, but a `once` approval is used up by the lookup. */
  consumeApproval(key: ApprovalKey): ApprovalRecord | undefined {
    this.write();
    this.writer?.commit.commitNow();
    return this.approvalStore.consume(key);
  }

  /**
   * Stores an approval, effective at once. Queued records are committed first, so the
   * `approval_decided` record that explains an approval is never younger than it.
   */
  storeApproval(key: ApprovalKey, record: ApprovalGrant): void {
    this.write();
    this.writer?.commit.commitNow();
    this.approvalStore.store(key, record);
  }

  /**
   * The remembered approvals (those stored with `storeApproval`: `session` scope, and
   * `once` approvals not yet used), oldest first, of one execution identity and/or tool.
   * Readers may list them beside the writer.
   */
  approvals(filter: ApprovalFilter = {}): ApprovalRecord[] {
    this.read();
    return this.approvalStore.list(filter);
  }

  /**
   * Forgets remembered approvals, effective at once: the next call of a matching tool
   * asks again. Returns how many were forgotten. `{}` forgets every one. The journal's
   * records (the `approval_decided` of past calls) are history and stay.
   */
  revokeApprovals(filter: ApprovalFilter): number {
    this.write();
    this.writer?.commit.commitNow();
    return this.approvalStore.revoke(filter);
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
    return verifyChains(this.db, sessionId);
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

function commitThreadShareOf(share: number | undefined, file: string): number {
  if (share === undefined) return THREAD_AFTER_COMMIT_SHARE;
  if (typeof share !== "number" || !(share > 0 && share <= 1)) {
    throw journalError(JOURNAL_ERRORS.OPEN_FAILED, `journal ${JSON.stringify(file)}: commitThreadShare must be a number above 0 and at most 1, got ${String(share)}`, { path: file });
  }
  return share;
}
