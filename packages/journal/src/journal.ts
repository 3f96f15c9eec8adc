import type Database from "better-sqlite3";
import path from "node:path";
import type { ApprovalFilter, ApprovalGrant, ApprovalKey, ApprovalRecord } from "./store/approvals.js";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import { GroupCommit } from "./write/group-commit.js";
import type {
  ApprovalDecidedInput,
  CallFinishedInput,
  CallElicitationAnsweredInput,
  CallElicitationAskedInput,
  CallProgressInput,
  CallRef,
  CallRequestedInput,
  CallStartedInput,
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
 * How hard a commit holds on: `grouped` (default, WAL with `synchronous=NORMAL`) survives kill -9 of the process, and on power loss may lose
 * the newest commits, never tear them; `strict` (`synchronous=FULL`) fsyncs every commit before acknowledging it, surviving power loss.
 * @example
 * ```ts
 * const journal = Journal.open({ path, durability: "strict" });
 * ```
 */
export type Durability = "grouped" | "strict";

/**
 * How to open a journal.
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
 * The durable record of every session, approval and call (A3), with the approval store (A2, M3). One process writes a file; any number of
 * readers may read it beside the writer. The contract: each write is checked, hashed onto its session's chain and queued at once, and
 * everything queued in one turn of the event loop commits in one SQLite transaction. `callStarted` resolves once the transaction holding
 * its record committed, so a start the runtime was told about survives kill -9 (`grouped`: WAL, `synchronous=NORMAL`) and power loss
 * (`strict`: `synchronous=FULL`). A record queued after it and not yet committed may be lost by a crash; its call is then marked
 * `interrupted` at the next open, never replayed.
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
  /** Calls found without a terminal record at open, now marked `interrupted`; empty for a reader. */
  readonly recovered: readonly InterruptedCall[];
  /** What opening as the writer found and could not put right (empty for a reader, and for a file only this package wrote). */
  readonly warnings: readonly JournalWarning[];
  private closed = false;

  private constructor(
    readonly path: string,
    readonly durability: Durability,
    private readonly store: SqliteStore,
    private readonly reader: JournalReader,
    private readonly writer: { writer: JournalWriter; commit: GroupCommit; lock: WriterLock } | undefined,
    found: { recovered: readonly InterruptedCall[]; warnings: readonly JournalWarning[] } = { recovered: [], warnings: [] },
  ) {
    this.recovered = Object.freeze([...found.recovered]);
    this.warnings = Object.freeze([...found.warnings]);
  }
  /** Whether this is a reader (`readonly: true`). */
  get readonly(): boolean {
    return this.writer === undefined;
  }
  /**
   * Opens (creating and migrating if needed) a journal. A writer then recovers: every call a crash left open is marked `interrupted` and listed in
   * {@link recovered}. Throws `JOURNAL_OPEN_FAILED` (also when recovery cannot commit, e.g. the disk is full: nothing in the file is lost),
   * `JOURNAL_LOCKED`, `JOURNAL_NOT_A_FILE`, `JOURNAL_NOT_A_JOURNAL`, `JOURNAL_DAMAGED`, `JOURNAL_SCHEMA_TOO_NEW`, or for a reader
   * `JOURNAL_NEEDS_MIGRATION`, `JOURNAL_EMPTY` and `JOURNAL_FOLDER_READ_ONLY`.
   */
  static open(options: JournalOptions): Journal {
    const file = options.path;
    const durability = options.durability ?? "grouped";
    if (durability !== "grouped" && durability !== "strict")
      throw journalError(
        JOURNAL_ERRORS.INVALID_RECORD,
        `journal ${JSON.stringify(file)}: durability must be "grouped" or "strict", got ${JSON.stringify(durability)}`,
        { field: "durability" },
      );
    const readonly = options.readonly === true;
    refuseNonRegularFile(file);
    // A writer takes the lock (making the journal's folder) before it migrates or recovers anything.
    const lock = readonly ? undefined : WriterLock.acquire(file);
    let db: Database.Database;
    try {
      db = openDatabase(file, { readonly, synchronous: durability === "strict" ? "FULL" : "NORMAL" });
    } catch (error) {
      lock?.release();
      throw error;
    }
    try {
      const store = new SqliteStore(db);
      const reader = new JournalReader(db);
      if (lock === undefined) return new Journal(file, durability, store, reader, undefined);
      const commit = new GroupCommit(store, file);
      const state = new LiveState(
        store,
        (read) => commit.lookup(read),
        () => commit.commitNow(),
      );
      const writer = new JournalWriter(commit, state);
      // Absolute: the host may change its working folder later.
      const legacyTail = path.resolve(file);
      const found = recoverOrExplain(file, () => {
        // What a crash left only in a legacy tail log is committed first, so recovery sees it.
        const replayed = replayLegacyTail(writer, legacyTail);
        commit.commitNow();
        const recovery = recoverInterruptedCalls(store, state, writer, commit);
        return { recovered: recovery.recovered, warnings: [...replayed, ...recovery.warnings] };
      });
      removeLegacyTail(legacyTail);
      return new Journal(file, durability, store, reader, { writer, commit, lock }, found);
    } catch (error) {
      db.close();
      lock?.release();
      // A damaged database met while reading it becomes the journal's error, as when opening it.
      throw openFailure(file, error);
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
   * Records that an approved call starts (with the OAuth scopes it runs under, for a
   * provider that uses OAuth); resolves once its record is committed: await it before
   * running the tool.
   */
  callStarted(record: CallStartedInput): Promise<void> {
    try {
      return this.write().callStarted(record);
    } catch (error) {
      return Promise.reject(error);
    }
  }
  callProgress(record: CallProgressInput): void {
    this.write().callProgress(record);
  }
  /** Records a provider's request for user input during a started call (M9). */
  callElicitationAsked(record: CallElicitationAskedInput): void {
    this.write().callElicitationAsked(record);
  }
  /** Records how an elicitation was answered and by whom (M9). */
  callElicitationAnswered(record: CallElicitationAnsweredInput): void {
    this.write().callElicitationAnswered(record);
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
    return this.approvalsToWrite().consume(key);
  }
  /** Stores an approval, effective at once. */
  storeApproval(key: ApprovalKey, record: ApprovalGrant): void {
    this.approvalsToWrite().store(key, record);
  }
  /** The remembered approvals (`session` scope, and `once` approvals not yet used), oldest first; readers may list them. */
  approvals(filter: ApprovalFilter = {}): ApprovalRecord[] {
    this.read();
    return this.store.approvals.list(filter);
  }
  /** Forgets remembered approvals, effective at once, and returns how many; `{}` forgets every one. Records stay. */
  revokeApprovals(filter: ApprovalFilter): number {
    return this.approvalsToWrite().revoke(filter);
  }
  sessions(): SessionSummary[] {
    return this.read().sessions();
  }

  session(sessionId: string): SessionSummary | undefined {
    return this.read().session(sessionId);
  }

  calls(sessionId: string): CallSummary[] {
    return this.read().calls(sessionId);
  }
  /** Every record of one call, in order: requested, decision, started, progress, terminal. */
  timeline(call: CallRef): JournalRecord[] {
    return this.read().timeline(call);
  }
  /** The session's records in chain order. */
  records(sessionId: string): Iterable<JournalRecord> {
    return this.read().records(sessionId);
  }
  /**
   * The session as JSON lines, one record per line (canonical JSON, with `prevHash` and `hash`): drop those two keys, canonicalize, and
   * `sha256(prevHash + text)` gives `hash`.
   */
  exportSession(sessionId: string): Iterable<string> {
    return this.read().exportSession(sessionId);
  }
  /** Checks every chain (or one session's) and reports the first broken or missing link, or index cell that disagrees with the hashed records. */
  verify(sessionId?: string): VerifyReport {
    this.read();
    return verifyChains(this.store.db, sessionId);
  }
  private write(): JournalWriter {
    if (this.closed) throw closedError(this.path);
    if (this.writer === undefined)
      throw journalError(JOURNAL_ERRORS.READ_ONLY, `journal ${JSON.stringify(this.path)} was opened read-only; open it without readonly to write`, {
        path: this.path,
      });
    return this.writer.writer;
  }
  // A writer's reads see its own queued records: commit them first.
  private read(): JournalReader {
    if (this.closed) throw closedError(this.path);
    this.writer?.commit.commitNow();
    return this.reader;
  }
  // Queued records are committed first, so the `approval_decided` record that explains an approval is never younger than it.
  private approvalsToWrite() {
    this.write();
    this.writer!.commit.commitNow();
    return this.store.approvals;
  }
}

function closedError(file: string) {
  return journalError(JOURNAL_ERRORS.CLOSED, `journal ${JSON.stringify(file)} is closed; open it again to use it`, { path: file });
}
/** Runs what opening as the writer writes (replay, recovery). */
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
