import { canonicalJson } from "@openworker/tools-sdk";
import type Database from "better-sqlite3";
import { type CallPhase, nextPhase, parseOpenCalls, stepOf } from "../records/call-phase.js";
import { damagedError, readContent } from "../store/damage.js";
import { type ChainHead, FrameReader, type StoredRecord } from "../store/frames.js";
import type { CallRef } from "../records/inputs.js";
import type { ApprovalDecider, CallOutcome, ElicitationAction, ElicitationAnswerer, ElicitationMode, JournalRecord } from "../records/records.js";

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
  /** The OAuth scopes the call ran under (an MCP provider that uses OAuth, M8). */
  readonly authorizedScopes?: readonly string[];
  /** What the call's provider asked the user during it, and how each was answered (M9). */
  readonly elicitations?: readonly ElicitationSummary[];
  readonly outcome?: CallOutcome;
  readonly code?: string;
}
/**
 * One elicitation of a call as the journal knows it: how the provider asked, and (once answered) what it received and from whom.
 *
 * @example
 * ```ts
 * const declined = (call.elicitations ?? []).filter((asked) => asked.action === "decline");
 * ```
 */
export interface ElicitationSummary {
  readonly elicitation: number;
  readonly mode: ElicitationMode;
  readonly action?: ElicitationAction;
  readonly by?: ElicitationAnswerer;
  readonly who?: string;
}

export interface SessionRow {
  ref: number;
  session_id: string;
  execution_identity: string;
  workspace: string;
  bundle_dir: string | null;
  opened_at: string;
  closed_at: string | null;
  final_seq: number | null;
  final_frame: number | null;
  final_calls: number | null;
  head_frame: number | null;
  seq: number | null;
  calls: number | null;
  open_calls: unknown;
}

const SESSION_COLUMNS = `s.ref, s.session_id, s.execution_identity, s.workspace, s.bundle_dir, s.opened_at, s.closed_at,
  s.final_seq, s.final_frame, s.final_calls, l.head_frame, l.seq, l.calls, l.open_calls
  FROM sessions s LEFT JOIN live_sessions l ON l.ref = s.ref`;

/** The query side of a journal. */
export class JournalReader {
  private readonly sql;
  private readonly frames: FrameReader;

  constructor(db: Database.Database) {
    this.sql = {
      sessions: db.prepare<[], SessionRow>(`SELECT ${SESSION_COLUMNS} ORDER BY s.ref`),
      session: db.prepare<[string], SessionRow>(`SELECT ${SESSION_COLUMNS} WHERE s.session_id = ?`),
    };
    this.frames = new FrameReader(db);
  }
  sessions(): SessionSummary[] {
    return this.sql.sessions.all().map(toSession);
  }
  session(sessionId: string): SessionSummary | undefined {
    const row = this.sql.session.get(sessionId);
    return row === undefined ? undefined : toSession(row);
  }
  calls(sessionId: string): CallSummary[] {
    return summarizeCalls(sessionId, this.records(sessionId));
  }
  /** Every record of one call of a session, in order. */
  timeline(ref: CallRef): JournalRecord[] {
    const records: JournalRecord[] = [];
    for (const record of this.records(ref.sessionId)) if ("callId" in record && record.callId === ref.callId) records.push(record);
    return records;
  }
  /** The session's records in chain order, read a frame at a time so a long export never holds the connection (and so the writer's commits) for its whole length. */
  *records(sessionId: string): Generator<JournalRecord> {
    const row = this.sql.session.get(sessionId);
    if (row === undefined) return;
    for (const record of this.frames.records(headOf(row))) yield toRecord(record, sessionId);
  }
  /** The session's records as JSON lines, canonical for records the writer wrote. */
  *exportSession(sessionId: string): Generator<string> {
    const row = this.sql.session.get(sessionId);
    if (row === undefined) return;
    for (const stored of this.frames.records(headOf(row))) {
      const content = readContent(stored.data, sessionId, stored.seq);
      yield canonicalJson({ ...content, prevHash: stored.prevHash, hash: stored.hash });
    }
  }
}

/** Each call of a session as its records (in chain order) leave it: the one place a call summary is derived. */
export function summarizeCalls(sessionId: string, records: Iterable<JournalRecord>): CallSummary[] {
  const calls = new Map<string, { summary: MutableCall; phase: CallPhase | undefined }>();
  for (const record of records) {
    const step = stepOf(record.kind);
    if (step === undefined || !("callId" in record)) continue;
    const call = calls.get(record.callId);
    // The call-phase reducer decides which records count: one that cannot follow its call's phase changes nothing.
    const phase = nextPhase(call?.phase, step, record.kind === "approval_decided" && record.decision === "denied");
    if (phase === undefined) continue;
    if (record.kind === "call_requested") {
      const { callId, turnId, alias, qualifiedName, argsDigest, seq: requestedSeq } = record;
      calls.set(callId, { phase, summary: { callId, sessionId, turnId, alias, qualifiedName, argsDigest, requestedSeq, started: false } });
      continue;
    }
    const summary = call!.summary;
    call!.phase = phase;
    if (record.kind === "approval_decided") {
      summary.decision = record.decision;
      summary.decidedBy = record.by;
    } else if (record.kind === "call_started") {
      summary.started = true;
      if (record.authorizedScopes !== undefined) summary.authorizedScopes = record.authorizedScopes;
    } else if (record.kind === "call_elicitation_asked") {
      summary.elicitations = [...(summary.elicitations ?? []), { elicitation: record.elicitation, mode: record.mode }];
    } else if (record.kind === "call_elicitation_answered") {
      const { elicitation, action, by, who } = record;
      summary.elicitations = (summary.elicitations ?? []).map((asked) =>
        asked.elicitation === elicitation && asked.action === undefined ? { ...asked, action, by, ...(who === undefined ? {} : { who }) } : asked,
      );
    } else if (record.kind === "call_finished") {
      summary.outcome = record.outcome;
      if (record.code !== undefined) summary.code = record.code;
    }
  }
  return Array.from(calls.values(), (call) => call.summary);
}

type MutableCall = { -readonly [K in keyof CallSummary]: CallSummary[K] };

/** Where a session's chain ends: its live head row, or the final frame noted when it closed. */
function headOf(row: { ref: number; session_id: string; head_frame: number | null; final_frame: number | null }): ChainHead {
  return { ref: row.ref, sessionId: row.session_id, headFrame: row.head_frame ?? row.final_frame };
}

function toRecord(record: StoredRecord, sessionId: string): JournalRecord {
  return { ...readContent(record.data, sessionId, record.seq), prevHash: record.prevHash, hash: record.hash } as JournalRecord;
}

export function toSession(row: SessionRow): SessionSummary {
  let open = 0;
  if (row.closed_at === null && row.open_calls !== null) {
    const calls = parseOpenCalls(row.open_calls);
    if (calls === undefined) throw damagedError(row.session_id, "its head row's open_calls is not the JSON object of open calls the journal writes");
    open = calls.size;
  }
  return {
    sessionId: row.session_id,
    executionIdentity: row.execution_identity,
    workspace: row.workspace,
    ...(row.bundle_dir === null ? {} : { bundleDir: row.bundle_dir }),
    openedAt: row.opened_at,
    ...(row.closed_at === null ? {} : { closedAt: row.closed_at }),
    records: (row.closed_at === null ? row.seq : row.final_seq) ?? 0,
    calls: (row.closed_at === null ? row.calls : row.final_calls) ?? 0,
    openCalls: open,
  };
}
