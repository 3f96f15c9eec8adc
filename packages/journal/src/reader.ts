import { canonicalJson } from "@openworker/tools-sdk";
import type Database from "better-sqlite3";
import { progressOf } from "./live-state.js";
import type { ApprovalDecider, CallOutcome, JournalRecord } from "./records.js";

/**
 * One session as the journal knows it.
 *
 * @example
 * ```ts
 * for (const session of journal.sessions()) console.log(session.sessionId, session.records);
 * ```
 */
export interface SessionSummary {
  readonly sessionId: string;
  readonly executionIdentity: string;
  readonly workspace: string;
  readonly bundleDir?: string;
  /** ISO-8601 UTC. */
  readonly openedAt: string;
  readonly closedAt?: string;
  /** Records in the session's chain (its last `seq`). */
  readonly records: number;
  readonly calls: number;
  /** Calls with no terminal record and no denial yet. */
  readonly openCalls: number;
}

/**
 * One call as the journal knows it.
 *
 * @example
 * ```ts
 * const unfinished = journal.calls(sessionId).filter((call) => call.outcome === undefined);
 * ```
 */
export interface CallSummary {
  readonly callId: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly alias: string;
  readonly qualifiedName: string;
  readonly argsDigest: string;
  /** `seq` of the `call_requested` record. */
  readonly requestedSeq: number;
  readonly decision?: "approved" | "denied";
  readonly decidedBy?: ApprovalDecider;
  readonly started: boolean;
  readonly outcome?: CallOutcome;
  readonly code?: string;
}

interface SessionRow {
  session_id: string;
  execution_identity: string;
  workspace: string;
  bundle_dir: string | null;
  opened_at: string;
  closed_at: string | null;
  records: number | null;
  calls: number;
  open_calls: number;
}

interface CallRow {
  call_id: string;
  session_ref: number;
  open: number;
  session_id: string;
  turn_id: string;
  alias: string;
  qualified_name: string;
  args_digest: string;
  requested_seq: number;
  decision: "approved" | "denied" | null;
  decided_by: ApprovalDecider | null;
  started: number;
  outcome: CallOutcome | null;
  code: string | null;
}

export interface RecordRow {
  seq: number;
  data: string;
  prev_hash: string;
  hash: string;
}

const SESSION_COLUMNS = `s.session_id, s.execution_identity, s.workspace, s.bundle_dir, s.opened_at, s.closed_at,
  (SELECT max(seq) FROM records r WHERE r.session_ref = s.ref) AS records,
  (SELECT count(*) FROM calls c WHERE c.session_ref = s.ref) AS calls,
  (SELECT count(*) FROM calls c WHERE c.session_ref = s.ref AND c.open = 1) AS open_calls`;

const PAGE = 1000;

/** The query side of a journal: every read goes through an index. */
export class JournalReader {
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      sessions: db.prepare<[], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions s ORDER BY s.ref`),
      session: db.prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.session_id = ?`),
      calls: db.prepare<[string], CallRow>(
        `SELECT c.*, s.session_id FROM calls c JOIN sessions s ON s.ref = c.session_ref
          WHERE s.session_id = ? ORDER BY c.requested_seq`,
      ),
      callRecords: db.prepare<[number, number, string], { kind: string; data: string }>(
        "SELECT kind, data FROM records WHERE session_ref = ? AND seq >= ? AND call_id = ? ORDER BY seq",
      ),
      call: db.prepare<[string], { session_ref: number; requested_seq: number }>(
        "SELECT session_ref, requested_seq FROM calls WHERE call_id = ?",
      ),
      timeline: db.prepare<[number, number, string], RecordRow>(
        "SELECT seq, data, prev_hash, hash FROM records WHERE session_ref = ? AND seq >= ? AND call_id = ? ORDER BY seq",
      ),
      sessionRef: db.prepare<[string], { ref: number }>("SELECT ref FROM sessions WHERE session_id = ?"),
      page: db.prepare<[number, number, number], RecordRow>(
        "SELECT seq, data, prev_hash, hash FROM records WHERE session_ref = ? AND seq > ? ORDER BY seq LIMIT ?",
      ),
    };
  }

  sessions(): SessionSummary[] {
    return this.sql.sessions.all().map(toSession);
  }

  session(sessionId: string): SessionSummary | undefined {
    const row = this.sql.session.get(sessionId);
    return row === undefined ? undefined : toSession(row);
  }

  calls(sessionId: string): CallSummary[] {
    return this.sql.calls.all(sessionId).map((row) => {
      if (row.open === 0) return toCall(row);
      // The row of an open call is written only when it closes; its records say how far it got.
      const { phase, decidedBy } = progressOf(this.sql.callRecords.all(row.session_ref, row.requested_seq, row.call_id));
      return toCall({
        ...row,
        decision: phase === "requested" ? null : "approved",
        decided_by: decidedBy ?? null,
        started: phase === "started" ? 1 : 0,
      });
    });
  }

  timeline(callId: string): JournalRecord[] {
    const call = this.sql.call.get(callId);
    if (call === undefined) return [];
    return this.sql.timeline.all(call.session_ref, call.requested_seq, callId).map(toRecord);
  }

  /**
   * The session's records in chain order, read a page at a time so a long export never
   * holds the connection (and so the writer's commits) for its whole length.
   */
  *records(sessionId: string): Generator<JournalRecord> {
    const session = this.sql.sessionRef.get(sessionId);
    if (session === undefined) return;
    let after = 0;
    for (;;) {
      const page = this.sql.page.all(session.ref, after, PAGE);
      for (const row of page) yield toRecord(row);
      if (page.length < PAGE) return;
      after = page[page.length - 1]!.seq;
    }
  }

  *exportSession(sessionId: string): Generator<string> {
    for (const record of this.records(sessionId)) yield canonicalJson(record);
  }
}

export function toRecord(row: RecordRow): JournalRecord {
  return { ...(JSON.parse(row.data) as object), prevHash: row.prev_hash, hash: row.hash } as JournalRecord;
}

function toSession(row: SessionRow): SessionSummary {
  return {
    sessionId: row.session_id,
    executionIdentity: row.execution_identity,
    workspace: row.workspace,
    ...(row.bundle_dir === null ? {} : { bundleDir: row.bundle_dir }),
    openedAt: row.opened_at,
    ...(row.closed_at === null ? {} : { closedAt: row.closed_at }),
    records: row.records ?? 0,
    calls: row.calls,
    openCalls: row.open_calls,
  };
}

function toCall(row: CallRow): CallSummary {
  return {
    callId: row.call_id,
    sessionId: row.session_id,
    turnId: row.turn_id,
    alias: row.alias,
    qualifiedName: row.qualified_name,
    argsDigest: row.args_digest,
    requestedSeq: row.requested_seq,
    ...(row.decision === null ? {} : { decision: row.decision }),
    ...(row.decided_by === null ? {} : { decidedBy: row.decided_by }),
    started: row.started === 1,
    ...(row.outcome === null ? {} : { outcome: row.outcome }),
    ...(row.code === null ? {} : { code: row.code }),
  };
}
