import { GENESIS_HASH } from "../records/chain.js";
import { type CallPhase, parseOpenCalls, stepOf } from "../records/call-phase.js";
import type { ApprovalDecider } from "../records/records.js";
import { damagedError, parseContent } from "../store/damage.js";
import type { JournalStore } from "../store/store.js";
import { JOURNAL_ERRORS, journalError } from "../errors.js";

export interface CallState {
  readonly callId: string;
  phase: CallPhase;
  decidedBy?: ApprovalDecider;
}

/** A live session: `head` is the hash of its newest record (queued or committed), `headFrame` its last frame in the file (`null` before its first commit). */
export interface SessionState {
  readonly sessionId: string;
  readonly ref: number;
  readonly executionIdentity: string;
  seq: number;
  head: string;
  closed: boolean;
  headFrame: number | null;
  /** Calls requested in the session, ever. */
  callCount: number;
  /** Calls requested and neither denied nor finished. */
  readonly openCalls: Map<string, CallState>;
  /** How ended calls ended; complete once `historyLoaded` (a session reloaded from the file reads its history when an id needs it). */
  readonly endedCalls: Map<string, "denied" | "finished">;
  historyLoaded: boolean;
  /** Frame lines queued for the next group commit, and the `seq` of the first. */
  pending: string[];
  pendingFirstSeq: number;
}
/** The writer's view of live sessions: chain heads (a record is hashed when it is queued) and each open call's phase. */
export class LiveState {
  private readonly sessions = new Map<string, SessionState>();
  private nextRef: number;
  /** `lookup` runs a read inside the writer's transaction; `commitQueued` commits what is queued first. */
  constructor(
    private readonly store: JournalStore,
    private readonly lookup: <T>(read: () => T) => T,
    private readonly commitQueued: () => void,
  ) {
    this.nextRef = store.lastRef() + 1;
  }
  /** The session, from memory or the file; `undefined` if it was never opened. */
  session(sessionId: string): SessionState | undefined {
    const known = this.sessions.get(sessionId);
    if (known !== undefined) return known;
    const row = this.lookup(() => this.store.session(sessionId));
    if (row === undefined) return undefined;
    const state = newSession(sessionId, row.ref, row.executionIdentity);
    state.closed = row.closedAt !== null;
    state.historyLoaded = false;
    if (state.closed) return state;
    if (row.headFrame === null || typeof row.hash !== "string" || typeof row.seq !== "number")
      throw journalError(
        JOURNAL_ERRORS.DAMAGED,
        `session ${JSON.stringify(sessionId)} has no chain head in the file (live_sessions row missing); the file was altered, run verify()`,
        { sessionId },
      );
    const openCalls = parseOpenCalls(row.openCalls);
    // Which calls are open is unknown: nothing may be appended to this session.
    if (openCalls === undefined)
      throw damagedError(sessionId, "its head row's open_calls is not the JSON object of open calls the journal writes, so its open calls are unknown");
    state.seq = row.seq;
    state.head = row.hash;
    state.headFrame = row.headFrame;
    state.callCount = row.calls ?? 0;
    for (const [callId, [phase, decidedBy]] of openCalls) {
      state.openCalls.set(callId, decidedBy === undefined ? { callId, phase } : { callId, phase, decidedBy });
    }
    this.sessions.set(sessionId, state);
    return state;
  }
  addSession(sessionId: string, executionIdentity: string): SessionState {
    const state = newSession(sessionId, this.nextRef, executionIdentity);
    this.nextRef += 1;
    this.sessions.set(sessionId, state);
    return state;
  }
  dropSession(sessionId: string): void {
    this.sessions.delete(sessionId);
  }
  forgetSession(sessionId: string): void {
    if (this.sessions.get(sessionId)?.closed === true) this.sessions.delete(sessionId);
  }
  /** The phase of a call of the session (open or ended), or `undefined` when it never had it. */
  phaseOf(session: SessionState, callId: string): CallPhase | undefined {
    const open = session.openCalls.get(callId);
    if (open !== undefined) return open.phase;
    if (!session.historyLoaded) this.loadHistory(session);
    return session.endedCalls.get(callId);
  }
  endCall(session: SessionState, callId: string, phase: "denied" | "finished"): void {
    session.openCalls.delete(callId);
    if (session.historyLoaded) session.endedCalls.set(callId, phase);
  }
  recentRecords(session: SessionState): Iterable<string> {
    return this.store.newestFirst({ ref: session.ref, sessionId: session.sessionId, headFrame: session.headFrame });
  }
  private loadHistory(session: SessionState): void {
    this.commitQueued();
    const phases = new Map<string, "denied" | "finished">();
    this.lookup(() => {
      for (const data of this.recentRecords(session)) {
        const content = parseContent(data);
        if (typeof content === "string") throw damagedError(session.sessionId, content);
        const step = stepOf(content.kind);
        if (step === undefined || typeof content.callId !== "string") continue;
        // Newest first: a call's last record tells how it ended.
        if (!phases.has(content.callId)) phases.set(content.callId, step === "approval_decided" && content.decision === "denied" ? "denied" : "finished");
      }
    });
    for (const [callId, phase] of phases) if (!session.openCalls.has(callId)) session.endedCalls.set(callId, phase);
    session.historyLoaded = true;
  }
}

function newSession(sessionId: string, ref: number, executionIdentity: string): SessionState {
  const calls = { callCount: 0, openCalls: new Map<string, CallState>(), endedCalls: new Map<string, "denied" | "finished">(), historyLoaded: true };
  return { sessionId, ref, executionIdentity, seq: 0, head: GENESIS_HASH, closed: false, headFrame: null, ...calls, pending: [], pendingFirstSeq: 0 };
}
