import type Database from "better-sqlite3";
import { CallIdHashes } from "./call-id-hashes.js";
import { parseOpenCalls } from "./call-tally.js";
import { GENESIS_HASH } from "./chain.js";
import { damagedError, readContent } from "./damage.js";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import { FrameReader } from "./frames.js";
import { OpenCalls } from "./open-calls.js";
import { jsonChars, jsonString } from "./record-text.js";
import type { ApprovalDecider } from "./records.js";

/** Where a call stands, as far as the journal's state machine is concerned. */
export type CallPhase = "requested" | "approved" | "denied" | "started" | "finished";

/** How an open call is kept in its session's head row: `[phase, decidedBy?]`. */
export type OpenCallEntry = readonly [phase: CallPhase, decidedBy?: ApprovalDecider];

export interface CallState {
  readonly callId: string;
  /** `callId` as JSON puts it between quotes, made once: each of the call's records carries it. */
  readonly idText: string;
  readonly sessionId: string;
  phase: CallPhase;
  decidedBy?: ApprovalDecider;
}

export interface SessionState {
  readonly sessionId: string;
  /** `sessionId` as JSON text, made once: every record of the session carries it. */
  readonly idText: string;
  readonly ref: number;
  readonly executionIdentity: string;
  seq: number;
  /**
   * The hash of the session's newest record; `undefined` while the commit thread hashes
   * its records (it keeps the head then; see `GroupCommit.hashOnThread`).
   */
  head: string | undefined;
  /** Whether `pending` holds lines queued without their hash (bare canonical JSON). */
  unhashed: boolean;
  closed: boolean;
  /** The session's last frame in the file; `null` before its first commit. */
  headFrame: number | null;
  /** Calls requested in the session, ever. */
  callCount: number;
  /** Calls requested and neither denied nor finished. */
  readonly openCalls: OpenCalls;
  /**
   * Calls that ended (denied or finished), as hashes (see `CallIdHashes`). Complete once
   * `historyLoaded`; for a session reloaded from the file it holds only what ended since,
   * until the history is read. How one ended is read from the records, only when an id
   * is met again (an error): a session whose every call is denied (a `deny` rule, `serve
   * --mcp` answering with `--approve no`) kept each denied id as a string until it closed.
   */
  readonly endedCalls: CallIdHashes;
  historyLoaded: boolean;
  /**
   * Lines queued for the next group commit, and the `seq` of the first. While the commit
   * thread takes the groups, a line is kept as its length only: the thread reads the
   * lines from the tail log, and the writer keeping every queued line alive until its
   * group went cost it a collector's copy of each (see `GroupCommit.enqueueRecord`).
   */
  pending: (string | number)[];
  pendingFirstSeq: number;
}

interface SessionRow {
  ref: number;
  execution_identity: string;
  closed_at: string | null;
  head_frame: number | null;
  seq: number | null;
  hash: string | null;
  calls: number | null;
  open_calls: unknown;
}

/**
 * The writer's in-memory view of live sessions: chain heads (so a record is hashed when
 * it is queued, not when it is committed) and each call's phase. A session is loaded
 * from its head row on first use and dropped once it closes and that is committed, so a
 * host that runs for months keeps only live sessions in memory. Call ids are unique
 * within their session; the ids of a reloaded session's earlier calls are read from its
 * frames only when a new call or an unknown call id needs them.
 */
export class LiveState {
  private readonly sessions = new Map<string, SessionState>();
  private nextRef: number;
  private readonly statements;
  private readonly frames: FrameReader;

  /**
   * `lookup` runs a read inside the writer's transaction (see `GroupCommit.lookup`);
   * `commitQueued` commits what is queued, before a read of a live session's frames.
   */
  constructor(
    db: Database.Database,
    private readonly lookup: <T>(read: () => T) => T,
    private readonly commitQueued: () => void,
  ) {
    this.statements = {
      session: db.prepare<[string], SessionRow>(
        `SELECT s.ref, s.execution_identity, s.closed_at, l.head_frame, l.seq, l.hash, l.calls, l.open_calls
           FROM sessions s LEFT JOIN live_sessions l ON l.ref = s.ref WHERE s.session_id = ?`,
      ),
      maxRef: db.prepare<[], { ref: number | null }>("SELECT max(ref) AS ref FROM sessions"),
      head: db.prepare<[number], { hash: string | null }>("SELECT hash FROM live_sessions WHERE ref = ?"),
    };
    this.frames = new FrameReader(db);
    this.nextRef = (this.statements.maxRef.get()?.ref ?? 0) + 1;
  }

  /** The session, from memory or the file; `undefined` if it was never opened. */
  session(sessionId: string): SessionState | undefined {
    const known = this.sessions.get(sessionId);
    if (known !== undefined) return known;
    const row = this.lookup(() => this.statements.session.get(sessionId));
    if (row === undefined) return undefined;
    const closed = row.closed_at !== null;
    if (!closed && row.head_frame === null) {
      throw journalError(
        JOURNAL_ERRORS.DAMAGED,
        `session ${JSON.stringify(sessionId)} has no chain head in the file (live_sessions row missing); the file was altered, run verify()`,
        { sessionId },
      );
    }
    const openCalls = closed ? new Map<string, OpenCallEntry>() : parseOpenCalls(row.open_calls);
    if (openCalls === undefined) {
      // Which calls are open is unknown: nothing may be appended to this session.
      throw damagedError(sessionId, "its head row's open_calls is not the JSON object of open calls the journal writes, so its open calls are unknown");
    }
    const state = newSession(sessionId, row.ref, row.execution_identity);
    state.closed = closed;
    state.historyLoaded = false;
    if (!closed) {
      state.seq = row.seq!;
      state.head = row.hash!;
      state.headFrame = row.head_frame;
      state.callCount = row.calls!;
      for (const [callId, [phase, decidedBy]] of openCalls) {
        const idText = jsonChars(callId);
        state.openCalls.add(decidedBy === undefined ? { callId, idText, sessionId, phase } : { callId, idText, sessionId, phase, decidedBy });
      }
      this.sessions.set(sessionId, state);
    }
    return state;
  }

  /** A new session, held in memory until its `session_opened` record is committed and beyond. */
  addSession(sessionId: string, executionIdentity: string): SessionState {
    const state = newSession(sessionId, this.nextRef, executionIdentity);
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

  /**
   * How an ended call ended, reading a reloaded session's history once if needed;
   * `undefined` when the session never had that call.
   */
  endedCall(session: SessionState, callId: string): "denied" | "finished" | undefined {
    if (!session.historyLoaded) this.loadHistory(session);
    if (!session.endedCalls.mayHave(callId)) return undefined;
    // A hash hit: a reused id (an error the caller reports), or, rarely, another id with
    // the same hash. The session's records tell which, and how it ended.
    let ending: "denied" | "finished" | undefined;
    this.forEachEnd(session, (ended, denied) => {
      if (ended === callId) ending = denied ? "denied" : "finished";
    });
    return ending;
  }

  /** Whether the session ever had a call with that id. */
  hasCall(session: SessionState, callId: string): boolean {
    return session.openCalls.has(callId) || this.endedCall(session, callId) !== undefined;
  }

  /** The data of the session's committed records, newest first. */
  recentRecords(session: SessionState): Iterable<string> {
    return this.frames.newestFirst({ ref: session.ref, sessionId: session.sessionId, headFrame: session.headFrame });
  }

  private loadHistory(session: SessionState): void {
    this.forEachEnd(session, (callId) => session.endedCalls.add(callId));
    session.historyLoaded = true;
  }

  /**
   * The chain head the file holds for a live session (its head row): where the writer
   * takes the chain back from a commit thread that stopped with everything committed.
   */
  storedHead(session: SessionState): string {
    const hash = this.lookup(() => this.statements.head.get(session.ref))?.hash;
    if (typeof hash !== "string") throw damagedError(session.sessionId, "its head row holds no chain hash");
    return hash;
  }

  /** Calls `visit` for every ended call in the session's records (a terminal record, or a denial). */
  private forEachEnd(session: SessionState, visit: (callId: string, denied: boolean) => void): void {
    // The walk starts at the session's head frame, which may still be queued or on its
    // way to the commit thread.
    this.commitQueued();
    this.lookup(() => {
      for (const record of this.frames.records({ ref: session.ref, sessionId: session.sessionId, headFrame: session.headFrame })) {
        const content = readContent(record.data, session.sessionId, record.seq);
        if (typeof content.callId !== "string") continue;
        if (content.kind === "call_finished") visit(content.callId, false);
        else if (content.kind === "approval_decided" && content.decision === "denied") visit(content.callId, true);
      }
    });
  }
}

function newSession(sessionId: string, ref: number, executionIdentity: string): SessionState {
  return {
    sessionId,
    idText: jsonString(sessionId),
    ref,
    executionIdentity,
    seq: 0,
    head: GENESIS_HASH,
    unhashed: false,
    closed: false,
    headFrame: null,
    callCount: 0,
    openCalls: new OpenCalls(),
    endedCalls: new CallIdHashes(),
    historyLoaded: true,
    pending: [],
    pendingFirstSeq: 0,
  };
}

/**
 * The open calls of a session as its head row keeps them: `{"<callId>":["<phase>","<decidedBy>"]}`.
 * Written for every session a commit touches, so it is concatenated, not built as an
 * object and stringified.
 */
export function openCallsJson(session: SessionState): string {
  if (session.openCalls.size === 0) return "{}";
  let text = "{";
  for (const call of session.openCalls.values()) {
    if (text.length > 1) text += ",";
    text += `${jsonString(call.callId)}:["${call.phase}"${call.decidedBy === undefined ? "" : `,"${call.decidedBy}"`}]`;
  }
  return `${text}}`;
}
