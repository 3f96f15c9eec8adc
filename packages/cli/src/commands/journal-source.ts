import { existsSync } from "node:fs";
import type {
  ApprovalFilter,
  ApprovalRecord,
  CallSummary,
  InterruptedCall,
  JournalRecord,
  JournalWarning,
  SessionSummary,
  VerifyReport,
} from "@openworker/journal";
import { OpenWorkerError } from "@openworker/tools-sdk";
import type { CommandContext } from "../cli/command.js";
import { CLI_ERROR_CODES } from "../cli/errors.js";

/** What the journal commands read and change, from either store: the SQLite file (`--journal PATH`) or PostgreSQL (`--journal postgres://…`). */
export interface JournalSource {
  readonly recovered: readonly InterruptedCall[];
  readonly warnings: readonly JournalWarning[];
  sessions(): Promise<SessionSummary[]>;
  session(sessionId: string): Promise<SessionSummary | undefined>;
  calls(sessionId: string): Promise<CallSummary[]>;
  records(sessionId: string): Promise<Iterable<JournalRecord>>;
  exportSession(sessionId: string): Promise<Iterable<string>>;
  verify(sessionId?: string): Promise<VerifyReport>;
  approvals(filter: ApprovalFilter): Promise<ApprovalRecord[]>;
  revokeApprovals(filter: ApprovalFilter): Promise<number>;
  close(): Promise<void>;
}

/**
 * Opens the journal `--journal` names: read-only beside a running writer, or as a writer (`write`, for revoking approvals: a SQLite
 * file's one writer, or one more host of a PostgreSQL journal). Each store's package is imported only when it is used.
 */
export async function openJournalSource(context: CommandContext, options: { write?: boolean } = {}): Promise<JournalSource> {
  const readonly = options.write !== true;
  const url = context.globals.journalUrl;
  if (url !== undefined) {
    const { PostgresJournal } = await import("@openworker/journal-postgres");
    const journal = await PostgresJournal.open({ connectionString: url, readonly });
    return {
      recovered: journal.recovered,
      warnings: journal.warnings,
      sessions: () => journal.sessions(),
      session: (sessionId) => journal.session(sessionId),
      calls: (sessionId) => journal.calls(sessionId),
      records: (sessionId) => journal.records(sessionId),
      exportSession: (sessionId) => journal.exportSession(sessionId),
      verify: (sessionId) => journal.verify(sessionId),
      approvals: (filter) => journal.approvals(filter),
      revokeApprovals: (filter) => journal.revokeApprovals(filter),
      close: () => journal.close(),
    };
  }
  const file = context.globals.journalPath;
  if (!existsSync(file))
    throw new OpenWorkerError(CLI_ERROR_CODES.JOURNAL_NOT_FOUND, `${file}: no journal here yet (sessions create it)`, { details: { file } });
  const { Journal } = await import("@openworker/journal");
  const journal = Journal.open({ path: file, readonly });
  // The SQLite journal answers at once; its reads are wrapped so both stores read alike.
  const now = async <T>(read: () => T): Promise<T> => read();
  return {
    recovered: journal.recovered,
    warnings: journal.warnings,
    sessions: () => now(() => journal.sessions()),
    session: (sessionId) => now(() => journal.session(sessionId)),
    calls: (sessionId) => now(() => journal.calls(sessionId)),
    records: (sessionId) => now(() => journal.records(sessionId)),
    exportSession: (sessionId) => now(() => journal.exportSession(sessionId)),
    verify: (sessionId) => now(() => journal.verify(sessionId)),
    approvals: (filter) => now(() => journal.approvals(filter)),
    revokeApprovals: (filter) => now(() => journal.revokeApprovals(filter)),
    close: () => now(() => journal.close()),
  };
}
