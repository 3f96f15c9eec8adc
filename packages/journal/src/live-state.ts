import type Database from "better-sqlite3";
import { GENESIS_HASH } from "./chain.js";
import type { ApprovalDecider } from "./records.js";

/** Where a call stands, as far as the journal's state machine is concerned. */
export type CallPhase = "requested" | "approved" | "denied" | "started" | "finished";

export interface SessionState {
  readonly sessionId: string;
  readonly ref: number;
  readonly executionIdentity: string;
  seq: number;
  head: string;
  closed: boolean;
  /** Calls requested and neither denied nor finished. */
  readonly openCalls: Set<string>;
}

export interface CallState {
  readonly callId: string;
  readonly sessionId: string;
  phase: CallPhase;
  decidedBy?: ApprovalDecider;
}

/**
 * The writer's in-memory view of sessions and calls in flight: chain heads (so a record
 * is hashed when it is queued, not when it is committed) and each call's phase. Entries
 * are loaded from the file on first use and dropped once a session closes or a call ends
 * and that is committed, so a host that runs for months keeps only live state in memory.
 */
export class LiveState {
  private readonly sessions = new Map<string, SessionState>();
  private readonly calls = new Map<string, CallState>();
  private nextRef: number;
  private readonly statements;

  /** `lookup` runs a read inside the writer's group transaction (see `GroupCommit.lookup`). */
  constructor(
    db: Database.Database,
    private readonly lookup: <T>(read: () => T) => T,
  ) {
    this.statements = {
      session: db.prepare<[string], { ref: number; execution_identity: string; closed_at: string | null }>(
        "SELECT ref, execution_identity, closed_at FROM sessions WHERE session_id = ?",
      ),
      head: db.prepare<[number], { seq: number; hash: string }>(
        "SELECT seq, hash FROM records WHERE session_ref = ? ORDER BY seq DESC LIMIT 1",
      ),
      openCalls: db.prepare<[number], { call_id: string }>(
        "SELECT call_id FROM calls WHERE session_ref = ? AND open = 1",
      ),
      call: db.prepare<
        [string],
        { session_id: string; session_ref: number; requested_seq: number; decision: string | null; outcome: string | null }
      >(
        // A subquery, not a join: the planner must start from the call's primary key.
        `SELECT (SELECT session_id FROM sessions WHERE ref = c.session_ref) AS session_id,
                c.session_ref, c.requested_seq, c.decision, c.outcome
           FROM calls c WHERE c.call_id = ?`,
      ),
      callRecords: db.prepare<[number, number, string], { kind: string; data: string }>(
        "SELECT kind, data FROM records WHERE session_ref = ? AND seq >= ? AND call_id = ? ORDER BY seq",
      ),
      maxRef: db.prepare<[], { ref: number | null }>("SELECT max(ref) AS ref FROM sessions"),
    };
    this.nextRef = (this.statements.maxRef.get()?.ref ?? 0) + 1;
  }

  /** The session, from memory or the file; `undefined` if it was never opened. */
  session(sessionId: string): SessionState | undefined {
    const known = this.sessions.get(sessionId);
    if (known !== undefined) return known;
    const row = this.lookup(() => this.statements.session.get(sessionId));
    if (row === undefined) return undefined;
    const head = this.lookup(() => this.statements.head.get(row.ref));
    const state: SessionState = {
      sessionId,
      ref: row.ref,
      executionIdentity: row.execution_identity,
      seq: head?.seq ?? 0,
      head: head?.hash ?? GENESIS_HASH,
      closed: row.closed_at !== null,
      openCalls: new Set(this.lookup(() => this.statements.openCalls.all(row.ref)).map((call) => call.call_id)),
    };
    if (!state.closed) this.sessions.set(sessionId, state);
    return state;
  }

  /** A new session, held in memory until its `session_opened` record is committed and beyond. */
  addSession(sessionId: string, executionIdentity: string): SessionState {
    const state: SessionState = {
      sessionId,
      ref: this.nextRef,
      executionIdentity,
      seq: 0,
      head: GENESIS_HASH,
      closed: false,
      openCalls: new Set(),
    };
    this.nextRef += 1;
    this.sessions.set(sessionId, state);
    return state;
  }

  /** Undoes `addSession` when its first record was refused. */
  dropSession(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** Drops a closed session once its close is committed. */
  forgetSession(sessionId: string): void {
    if (this.sessions.get(sessionId)?.closed === true) this.sessions.delete(sessionId);
  }

  call(callId: string): CallState | undefined {
    const known = this.calls.get(callId);
    if (known !== undefined) return known;
    const row = this.lookup(() => this.statements.call.get(callId));
    if (row === undefined) return undefined;
    let state: CallState;
    if (row.outcome !== null) state = { callId, sessionId: row.session_id, phase: "finished" };
    else if (row.decision === "denied") state = { callId, sessionId: row.session_id, phase: "denied" };
    else {
      // An open call's table row says nothing of its progress (only its end is written
      // there, to keep the hot path at one update per call): its records tell.
      const records = this.lookup(() => this.statements.callRecords.all(row.session_ref, row.requested_seq, callId));
      state = { callId, sessionId: row.session_id, ...progressOf(records) };
      this.calls.set(callId, state);
    }
    return state;
  }

  addCall(callId: string, sessionId: string): CallState {
    const state: CallState = { callId, sessionId, phase: "requested" };
    this.calls.set(callId, state);
    return state;
  }

  /** Drops a denied or finished call once that is committed; the file answers later questions. */
  forgetCall(callId: string): void {
    const state = this.calls.get(callId);
    if (state !== undefined && (state.phase === "finished" || state.phase === "denied")) this.calls.delete(callId);
  }

  get sizes(): { sessions: number; calls: number } {
    return { sessions: this.sessions.size, calls: this.calls.size };
  }
}

/** The phase (and decider) of an open call, from its records in order. */
export function progressOf(records: readonly { kind: string; data: string }[]): { phase: CallPhase; decidedBy?: ApprovalDecider } {
  let phase: CallPhase = "requested";
  let decidedBy: ApprovalDecider | undefined;
  for (const record of records) {
    if (record.kind === "approval_decided") {
      const decision = JSON.parse(record.data) as { decision: string; by: ApprovalDecider };
      phase = decision.decision === "denied" ? "denied" : "approved";
      decidedBy = decision.by;
    } else if (record.kind === "call_started") phase = "started";
  }
  return decidedBy === undefined ? { phase } : { phase, decidedBy };
}
