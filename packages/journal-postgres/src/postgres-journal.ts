import { randomUUID } from "node:crypto";
import os from "node:os";
import {
  JOURNAL_ERRORS,
  RECORD_KINDS,
  type ApprovalFilter,
  type ApprovalGrant,
  type ApprovalKey,
  type ApprovalRecord,
  type CallRef,
  type CallSummary,
  type InterruptedCall,
  type JournalRecord,
  type JournalWarning,
  type SessionSummary,
  type VerifyReport,
} from "@openworker/journal";
import { JournalEngine, journalError, type RecordWriter } from "@openworker/journal/internal/store";
import type pg from "pg";
import { SharedApprovals } from "./approvals.js";
import { connect, ReadConnection, redactConnectionString } from "./connection.js";
import { JOURNAL_POSTGRES_ERRORS, postgresError } from "./errors.js";
import { PostgresStore } from "./postgres-store.js";
import { PostgresReads } from "./reads.js";
import { ensureSchema } from "./schema.js";

/**
 * How to open a journal on PostgreSQL.
 * @example
 * ```ts
 * const options: PostgresJournalOptions = { connectionString: "postgres://journal@db.internal/openworker", leaseMs: 15_000 };
 * ```
 */
export interface PostgresJournalOptions {
  /** A `postgres://` URL (or libpq key/value string); its password is never printed. */
  readonly connectionString: string;
  /** The PostgreSQL schema holding the journal's tables (lowercase letters, digits, `_`). Default `openworker_journal`. */
  readonly schema?: string;
  /** Read only: no host lease, no recovery, no writes. */
  readonly readonly?: boolean;
  /** How long this host's lease lasts unless renewed (renewed every third of it, and by every commit). Default 15 000 ms, at least 200. */
  readonly leaseMs?: number;
  /** How the host is named in the `hosts` table. Default `<hostname> pid <pid>`. */
  readonly hostLabel?: string;
}

/** What recovering a dead host's sessions found: calls marked `interrupted` (never replayed), and what could not be put right. */
export interface PostgresRecovery {
  readonly sessions: readonly string[];
  readonly recovered: readonly InterruptedCall[];
  readonly warnings: readonly JournalWarning[];
}

const DEFAULT_SCHEMA = "openworker_journal";
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

// A PostgresJournal has every record method of the journal's writer (one per record kind, so a new kind needs no change here). The
// constructor defines each one, for every entry of RECORD_KINDS, which is what makes this declaration merging safe.
// oxlint-disable-next-line typescript/no-unsafe-declaration-merging
export interface PostgresJournal extends RecordWriter {}

/**
 * The journal on PostgreSQL, for fleets: many hosts, one database. The same records, chains, `verify()` and export as the SQLite journal;
 * every session is owned by the host that opened it, under that host's lease, and a host whose lease expired (it died) has its sessions
 * recovered by another: open calls marked `interrupted`, never replayed (A3, E4). Approvals are shared by every host (A2, M3).
 * `callStarted` resolves once its record is committed in PostgreSQL.
 * @example
 * ```ts
 * const journal = await PostgresJournal.open({ connectionString: process.env.JOURNAL_URL! });
 * journal.sessionOpened({ sessionId, executionIdentity, identityInputs, workspace });
 * journal.callRequested({ sessionId, turnId, callId, alias, qualifiedName, args });
 * journal.approvalDecided({ sessionId, callId, decision: "approved", by: "person", scope: "once", key });
 * await journal.callStarted({ sessionId, callId });
 * journal.callFinished({ sessionId, callId, outcome: "succeeded", result });
 * await journal.close();
 * ```
 */
export class PostgresJournal {
  /** Calls found open at open (on dead hosts' sessions), now marked `interrupted`. */
  readonly recovered: readonly InterruptedCall[];
  readonly warnings: readonly JournalWarning[];
  private closed = false;
  private readonly renewal: NodeJS.Timeout | undefined;

  private constructor(
    /** The connection string without its password: how messages name this journal. */
    readonly journal: string,
    private readonly connection: ReadConnection,
    private readonly reads: PostgresReads,
    private readonly shared: SharedApprovals,
    private readonly writer: { store: PostgresStore; engine: JournalEngine; client: pg.Client; leaseMs: number } | undefined,
    found: PostgresRecovery,
  ) {
    this.recovered = Object.freeze([...found.recovered]);
    this.warnings = Object.freeze([...found.warnings]);
    for (const kind of RECORD_KINDS) {
      const method = kind.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()) as keyof RecordWriter;
      (this as Record<string, unknown>)[method] = (input: unknown) => {
        const target = this.write() as unknown as Record<string, (input: unknown) => unknown>;
        return target[method]!.call(target, input);
      };
    }
    if (writer !== undefined) {
      this.renewal = setInterval(() => void writer.store.renewLease().catch(() => undefined), Math.max(50, Math.floor(writer.leaseMs / 3)));
      this.renewal.unref();
    }
  }
  /** This host's id in the `hosts` table (`undefined` for a reader). */
  get hostId(): string | undefined {
    return this.writer?.store.hostId;
  }
  get readonly(): boolean {
    return this.writer === undefined;
  }
  /**
   * Connects, creates the schema if missing (a writer), takes a lease for this host and recovers the sessions of hosts whose lease
   * expired. Throws `JOURNAL_PG_CONNECT_FAILED`, `JOURNAL_PG_SCHEMA_TOO_NEW`, `JOURNAL_PG_NOT_A_JOURNAL` (a reader) or
   * `JOURNAL_PG_INVALID_OPTION`.
   */
  static async open(options: PostgresJournalOptions): Promise<PostgresJournal> {
    const connectionString = options.connectionString;
    if (typeof connectionString !== "string" || connectionString.length === 0)
      throw postgresError(JOURNAL_POSTGRES_ERRORS.INVALID_OPTION, "PostgresJournal.open: connectionString must be a postgres:// URL", {
        field: "connectionString",
      });
    const journal = redactConnectionString(connectionString);
    const schema = options.schema ?? DEFAULT_SCHEMA;
    if (typeof schema !== "string" || !SCHEMA_NAME.test(schema))
      throw postgresError(
        JOURNAL_POSTGRES_ERRORS.INVALID_OPTION,
        `journal ${journal}: schema ${JSON.stringify(schema)} must be lowercase letters, digits and _, starting with a letter or _`,
        { field: "schema" },
      );
    const leaseMs = options.leaseMs ?? 15_000;
    if (typeof leaseMs !== "number" || !Number.isFinite(leaseMs) || leaseMs < 200)
      throw postgresError(JOURNAL_POSTGRES_ERRORS.INVALID_OPTION, `journal ${journal}: leaseMs must be a number of at least 200, got ${String(leaseMs)}`, {
        field: "leaseMs",
      });
    const readonly = options.readonly === true;
    const client = await connect(connectionString, schema);
    let connection: ReadConnection | undefined;
    try {
      await ensureSchema(client, schema, journal, !readonly);
      connection = new ReadConnection(await connect(connectionString, schema));
      const reads = new PostgresReads(connection);
      const shared = new SharedApprovals(connection);
      if (readonly) {
        await client.end();
        return new PostgresJournal(journal, connection, reads, shared, undefined, { sessions: [], recovered: [], warnings: [] });
      }
      const hostId = randomUUID();
      const registered = await client.query<{ host_no: number }>(
        "INSERT INTO hosts (host_id, host_no, label, lease_until) VALUES ($1, nextval('host_numbers'), $2, now() + make_interval(secs => $3)) RETURNING host_no",
        [hostId, options.hostLabel ?? `${os.hostname()} pid ${process.pid}`, leaseMs / 1000],
      );
      const store = new PostgresStore(client, hostId, registered.rows[0]!.host_no, leaseMs / 1000, journal);
      const engine = new JournalEngine(store, journal);
      const writer = { store, engine, client, leaseMs };
      const found = await recoverDeadHosts(writer);
      return new PostgresJournal(journal, connection, reads, shared, writer, found);
    } catch (error) {
      await client.end().catch(() => undefined);
      await connection?.end().catch(() => undefined);
      throw error;
    }
  }
  /**
   * Takes over the open sessions of every host whose lease expired and marks their open calls `interrupted` (A3): run it now and then
   * (a supervisor's timer), or open a journal, which does it once.
   */
  async recoverDeadHosts(): Promise<PostgresRecovery> {
    this.write();
    return recoverDeadHosts(this.writer!);
  }
  /** Resolves once everything written so far is committed in PostgreSQL. */
  async flush(): Promise<void> {
    if (this.closed || this.writer === undefined) return;
    await this.writer.engine.flush();
  }
  /** Commits what is queued, gives up the lease (sessions left open are recovered by the next host that looks) and disconnects. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewal);
    try {
      if (this.writer !== undefined) {
        await this.writer.engine.flush();
        await this.writer.store.release();
      }
    } finally {
      await this.writer?.client.end().catch(() => undefined);
      await this.connection.end().catch(() => undefined);
    }
  }
  /** A session-scope approval for the key, else a `once` approval for its exact `argsDigest`, from the table every host shares (M3). */
  findApproval(key: ApprovalKey): Promise<ApprovalRecord | undefined> {
    return this.reading(() => this.shared.find(key));
  }
  /** Like {@link findApproval}, but a `once` approval is used up; of two hosts consuming it, one gets it. */
  consumeApproval(key: ApprovalKey): Promise<ApprovalRecord | undefined> {
    return this.approving(() => this.shared.consume(key));
  }
  /** Stores an approval for every host; records written before it are committed first. */
  storeApproval(key: ApprovalKey, record: ApprovalGrant): Promise<void> {
    return this.approving(() => this.shared.store(key, record));
  }
  approvals(filter: ApprovalFilter = {}): Promise<ApprovalRecord[]> {
    return this.reading(() => this.shared.list(filter));
  }
  revokeApprovals(filter: ApprovalFilter): Promise<number> {
    return this.approving(() => this.shared.revoke(filter));
  }
  sessions(): Promise<SessionSummary[]> {
    return this.reading(() => this.reads.sessions());
  }
  session(sessionId: string): Promise<SessionSummary | undefined> {
    return this.reading(() => this.reads.session(sessionId));
  }
  calls(sessionId: string): Promise<CallSummary[]> {
    return this.reading(() => this.reads.calls(sessionId));
  }
  async timeline(call: CallRef): Promise<JournalRecord[]> {
    const records = await this.records(call.sessionId);
    return records.filter((record) => "callId" in record && record.callId === call.callId);
  }
  records(sessionId: string): Promise<JournalRecord[]> {
    return this.reading(() => this.reads.records(sessionId));
  }
  /** The session as JSON lines, exactly as the SQLite journal exports them. */
  exportSession(sessionId: string): Promise<string[]> {
    return this.reading(() => this.reads.exportSession(sessionId));
  }
  /** Checks every chain (or one session's) in one snapshot of the database, as the SQLite journal's `verify()` does. */
  verify(sessionId?: string): Promise<VerifyReport> {
    return this.reading(() => this.reads.verify(sessionId));
  }
  private write(): RecordWriter {
    if (this.closed) throw journalError(JOURNAL_ERRORS.CLOSED, `journal ${this.journal} is closed; open it again to use it`, {});
    if (this.writer === undefined)
      throw journalError(JOURNAL_ERRORS.READ_ONLY, `journal ${this.journal} was opened read-only; open it without readonly to write`, {});
    return this.writer.engine.writer;
  }
  // A writer's reads see its own records: what it wrote is committed first.
  private async reading<T>(read: () => Promise<T>): Promise<T> {
    if (this.closed) throw journalError(JOURNAL_ERRORS.CLOSED, `journal ${this.journal} is closed; open it again to use it`, {});
    await this.flush();
    return read();
  }
  // The `approval_decided` record that explains an approval is never younger than it.
  private async approving<T>(change: () => Promise<T>): Promise<T> {
    this.write();
    await this.flush();
    return change();
  }
}

async function recoverDeadHosts(writer: { store: PostgresStore; engine: JournalEngine }): Promise<PostgresRecovery> {
  const sessions = await writer.store.claimDeadHosts();
  if (sessions.length === 0) return { sessions, recovered: [], warnings: [] };
  let found: ReturnType<JournalEngine["recover"]>;
  try {
    found = writer.engine.recover();
  } finally {
    writer.store.doneRecovering();
  }
  await writer.engine.flush();
  return { sessions, ...found };
}
