import type Database from "better-sqlite3";
import { chainHash, recordData } from "./chain.js";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import type { GroupCommit } from "./group-commit.js";
import { argumentsDigest } from "./identity.js";
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
import type { CallPhase, CallState, LiveState, SessionState } from "./live-state.js";
import { CALL_OUTCOMES, type RecordBodies, type RecordKind } from "./records.js";
import {
  optionalText,
  requireBoolean,
  requireImageDigests,
  requireOneOf,
  requireStringMap,
  requireText,
} from "./validate.js";

/**
 * Turns the runtime's calls into chained records: checks each against the session and
 * call state machine (so an impossible history is refused when it is written, not found
 * by an auditor later), hashes it onto its session's chain, and queues it for the next
 * group commit.
 */
export class JournalWriter {
  private readonly sql;
  private readonly clock = new IsoClock();

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
    private readonly state: LiveState,
  ) {
    this.sql = {
      session: db.prepare(
        "INSERT INTO sessions (ref, session_id, execution_identity, workspace, bundle_dir, opened_at) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      closeSession: db.prepare("UPDATE sessions SET closed_at = ?, final_seq = ?, final_hash = ? WHERE ref = ?"),
      call: db.prepare(
        "INSERT INTO calls (call_id, session_ref, turn_id, alias, qualified_name, args_digest, requested_seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ),
      // One update per call, when it closes: its decision, start and end together.
      close: db.prepare(
        "UPDATE calls SET decision = ?, decided_by = ?, started = ?, outcome = ?, code = ?, open = 0 WHERE call_id = ?",
      ),
    };
  }

  sessionOpened(input: SessionOpenedInput): void {
    const sessionId = requireText("sessionOpened", "sessionId", input.sessionId);
    const site = `sessionOpened of session ${JSON.stringify(sessionId)}`;
    const executionIdentity = requireText(site, "executionIdentity", input.executionIdentity);
    const workspace = requireText(site, "workspace", input.workspace);
    const bundleDir = optionalText(site, "bundleDir", input.bundleDir);
    this.commit.assertHealthy();
    if (this.state.session(sessionId) !== undefined) {
      throw journalError(
        JOURNAL_ERRORS.SESSION_EXISTS,
        `${site}: the journal already holds this session; session ids must be unique`,
        { sessionId },
      );
    }
    const body = { executionIdentity, identityInputs: input.identityInputs, workspace, bundleDir };
    const session = this.state.addSession(sessionId, executionIdentity);
    try {
      this.append(session, "session_opened", null, body, (at) =>
        this.sql.session.run(session.ref, sessionId, executionIdentity, workspace, bundleDir ?? null, at),
      );
    } catch (error) {
      // A refused body (not serializable) must leave no half-made session behind.
      this.state.dropSession(sessionId);
      throw error;
    }
  }

  turnPrepared(input: TurnPreparedInput): void {
    const site = `turnPrepared of session ${JSON.stringify(input.sessionId)}`;
    const session = this.liveSession(site, input.sessionId);
    this.append(session, "turn_prepared", null, {
      turnId: requireText(site, "turnId", input.turnId),
      selectionFingerprint: requireText(site, "selectionFingerprint", input.selectionFingerprint),
      catalogFingerprints: requireStringMap(site, "catalogFingerprints", input.catalogFingerprints),
    });
  }

  callRequested(input: CallRequestedInput): void {
    const callId = requireText("callRequested", "callId", input.callId);
    const site = `callRequested of call ${JSON.stringify(callId)}`;
    const session = this.liveSession(site, input.sessionId);
    const turnId = requireText(site, "turnId", input.turnId);
    const alias = requireText(site, "alias", input.alias);
    const qualifiedName = requireText(site, "qualifiedName", input.qualifiedName);
    if (this.state.call(callId) !== undefined) {
      throw journalError(JOURNAL_ERRORS.CALL_EXISTS, `${site}: the journal already holds this call; call ids must be unique`, {
        callId,
      });
    }
    let expected: string;
    try {
      expected = argumentsDigest(input.args);
    } catch (cause) {
      throw notJson(site, cause);
    }
    // The digest is computed here when the caller leaves it out (the runtime does: one
    // canonicalization per call, not two); a digest that is given must match.
    const argsDigest = input.argsDigest === undefined ? expected : requireText(site, "argsDigest", input.argsDigest);
    if (argsDigest !== expected) {
      throw journalError(
        JOURNAL_ERRORS.INVALID_RECORD,
        `${site}: argsDigest ${argsDigest} does not match the arguments (argumentsDigest gives ${expected})`,
        { callId, field: "argsDigest" },
      );
    }
    const seq = session.seq + 1;
    this.append(session, "call_requested", callId, { turnId, callId, alias, qualifiedName, args: input.args, argsDigest }, () =>
      this.sql.call.run(callId, session.ref, turnId, alias, qualifiedName, argsDigest, seq),
    );
    this.state.addCall(callId, session.sessionId);
    session.openCalls.add(callId);
  }

  approvalDecided(input: ApprovalDecidedInput): void {
    const site = `approvalDecided of call ${JSON.stringify(input.callId)}`;
    const { session, call } = this.liveCall(site, input, "decide");
    const decision = requireOneOf(site, "decision", input.decision, ["approved", "denied"] as const);
    const by = requireOneOf(site, "by", input.by, ["person", "policy", "bypass"] as const);
    const body = {
      callId: call.callId,
      decision,
      by,
      who: optionalText(site, "who", input.who),
      scope: requireOneOf(site, "scope", input.scope, ["once", "session"] as const),
      key: requireText(site, "key", input.key),
      reason: optionalText(site, "reason", input.reason),
    };
    const denied = decision === "denied";
    this.append(
      session,
      "approval_decided",
      call.callId,
      body,
      denied ? () => this.sql.close.run("denied", by, 0, null, null, call.callId) : undefined,
      denied ? () => this.state.forgetCall(call.callId) : undefined,
    );
    call.phase = denied ? "denied" : "approved";
    call.decidedBy = by;
    if (denied) session.openCalls.delete(call.callId);
  }

  callStarted(input: CallRef): Promise<void> {
    try {
      const site = `callStarted of call ${JSON.stringify(input.callId)}`;
      const { session, call } = this.liveCall(site, input, "start");
      this.append(session, "call_started", call.callId, { callId: call.callId });
      call.phase = "started";
      return this.commit.whenCommitted();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  callProgress(input: CallProgressInput): void {
    const site = `callProgress of call ${JSON.stringify(input.callId)}`;
    const { session, call } = this.liveCall(site, input, "progress");
    this.append(session, "call_progress", call.callId, { callId: call.callId, event: input.event });
  }

  callFinished(input: CallFinishedInput): void {
    const site = `callFinished of call ${JSON.stringify(input.callId)}`;
    const { session, call } = this.liveCall(site, input, "finish");
    const outcome = requireOneOf(site, "outcome", input.outcome, CALL_OUTCOMES);
    const code = optionalText(site, "code", input.code);
    const body = {
      callId: call.callId,
      outcome,
      code,
      message: typeof input.message === "string" ? input.message : undefined,
      result: input.result,
      imageDigests: requireImageDigests(site, input.imageDigests),
      breach: input.breach,
    };
    this.append(
      session,
      "call_finished",
      call.callId,
      body,
      this.closeCall(call, outcome, code),
      () => this.state.forgetCall(call.callId),
    );
    call.phase = "finished";
    session.openCalls.delete(call.callId);
  }

  revoked(input: RevokedInput): void {
    const site = `revoked of session ${JSON.stringify(input.sessionId)}`;
    const session = this.liveSession(site, input.sessionId);
    this.append(session, "revoked", null, {
      tool: requireText(site, "tool", input.tool),
      reason: requireOneOf(site, "reason", input.reason, ["turn", "cancel", "close"] as const),
    });
  }

  turnFinished(input: TurnFinishedInput): void {
    const site = `turnFinished of session ${JSON.stringify(input.sessionId)}`;
    const session = this.liveSession(site, input.sessionId);
    this.append(session, "turn_finished", null, {
      turnId: requireText(site, "turnId", input.turnId),
      completed: requireBoolean(site, "completed", input.completed),
      reason: optionalText(site, "reason", input.reason),
    });
  }

  sessionClosed(input: { readonly sessionId: string }): void {
    const site = `sessionClosed of session ${JSON.stringify(input.sessionId)}`;
    const session = this.liveSession(site, input.sessionId);
    if (session.openCalls.size > 0) {
      const open = [...session.openCalls];
      throw journalError(
        JOURNAL_ERRORS.CALLS_OPEN,
        `${site}: ${open.length} call(s) have no terminal record (${open.slice(0, 5).join(", ")}); record callFinished for each (e.g. "cancelled") before closing`,
        { sessionId: session.sessionId, openCalls: open },
      );
    }
    this.append(
      session,
      "session_closed",
      null,
      {},
      (at, seq, hash) => this.sql.closeSession.run(at, seq, hash, session.ref),
      () => this.state.forgetSession(session.sessionId),
    );
    session.closed = true;
  }

  /**
   * Writes `interrupted` for a call a crash left open (A3). Recovery only: it bypasses
   * the phase check because any open phase may have been cut short.
   */
  interrupt(call: CallState, message: string): void {
    const session = this.state.session(call.sessionId);
    if (session === undefined || session.closed) return;
    this.append(
      session,
      "call_finished",
      call.callId,
      { callId: call.callId, outcome: "interrupted", code: "JOURNAL_INTERRUPTED", message },
      this.closeCall(call, "interrupted", "JOURNAL_INTERRUPTED"),
      () => this.state.forgetCall(call.callId),
    );
    call.phase = "finished";
    session.openCalls.delete(call.callId);
  }

  /** The calls-table update of a closing call, capturing its phase before it becomes "finished". */
  private closeCall(call: CallState, outcome: string, code: string | undefined): () => void {
    const decision = call.phase === "approved" || call.phase === "started" ? "approved" : null;
    const started = call.phase === "started" ? 1 : 0;
    const by = call.decidedBy ?? null;
    return () => this.sql.close.run(decision, by, started, outcome, code ?? null, call.callId);
  }

  private liveSession(site: string, sessionId: unknown): SessionState {
    const id = requireText(site, "sessionId", sessionId);
    this.commit.assertHealthy();
    const session = this.state.session(id);
    if (session === undefined) {
      throw journalError(
        JOURNAL_ERRORS.UNKNOWN_SESSION,
        `${site}: no session ${JSON.stringify(id)} in this journal; record sessionOpened first`,
        { sessionId: id },
      );
    }
    if (session.closed) {
      throw journalError(JOURNAL_ERRORS.SESSION_CLOSED, `${site}: session ${JSON.stringify(id)} is closed`, { sessionId: id });
    }
    return session;
  }

  private liveCall(site: string, ref: CallRef, step: CallStep): { session: SessionState; call: CallState } {
    const session = this.liveSession(site, ref.sessionId);
    const callId = requireText(site, "callId", ref.callId);
    const call = this.state.call(callId);
    if (call === undefined) {
      throw journalError(JOURNAL_ERRORS.UNKNOWN_CALL, `${site}: no call ${JSON.stringify(callId)} was requested; record callRequested first`, {
        callId,
      });
    }
    if (call.sessionId !== session.sessionId) {
      throw journalError(
        JOURNAL_ERRORS.CALL_SESSION_MISMATCH,
        `${site}: the call belongs to session ${JSON.stringify(call.sessionId)}, not ${JSON.stringify(session.sessionId)}`,
        { callId, sessionId: session.sessionId, callSession: call.sessionId },
      );
    }
    if (!ALLOWED[step].includes(call.phase)) throw phaseError(site, callId, call.phase, step);
    return { session, call };
  }

  /**
   * Hashes the record onto its session's chain now and queues its insert. Nothing
   * changes if the record cannot be encoded.
   */
  private append<K extends RecordKind>(
    session: SessionState,
    kind: K,
    callId: string | null,
    body: RecordBodies[K],
    alsoWrite?: (at: string, seq: number, hash: string) => void,
    afterCommit?: () => void,
  ): void {
    const seq = session.seq + 1;
    const at = this.clock.now();
    let data: string;
    try {
      data = recordData({ ...body, at, kind, seq, sessionId: session.sessionId });
    } catch (cause) {
      throw notJson(`${kind} of session ${JSON.stringify(session.sessionId)}`, cause);
    }
    const prevHash = session.head;
    const hash = chainHash(prevHash, data);
    this.commit.enqueueRecord(
      [session.ref, seq, kind, callId, data, prevHash, hash],
      alsoWrite === undefined ? undefined : () => alsoWrite(at, seq, hash),
      afterCommit,
    );
    session.seq = seq;
    session.head = hash;
  }
}

/**
 * `new Date().toISOString()`, formatted at most once per millisecond: records appended
 * within the same millisecond share the string, which is exactly what each would have
 * got on its own (the format has millisecond resolution), so `at` stays the true
 * append time of every record.
 */
class IsoClock {
  private millis = -1;
  private text = "";

  now(): string {
    const millis = Date.now();
    if (millis !== this.millis) {
      this.millis = millis;
      this.text = new Date(millis).toISOString();
    }
    return this.text;
  }
}

type CallStep = "decide" | "start" | "progress" | "finish";

/** The call state machine: which phases each step may follow. */
const ALLOWED: Readonly<Record<CallStep, readonly CallPhase[]>> = {
  decide: ["requested"],
  start: ["approved"],
  progress: ["started"],
  finish: ["requested", "approved", "started"],
};

function phaseError(site: string, callId: string, phase: CallPhase, step: CallStep) {
  const call = JSON.stringify(callId);
  const details = { callId, phase };
  if (phase === "finished") {
    return journalError(JOURNAL_ERRORS.TERMINAL_EXISTS, `${site}: call ${call} already has its terminal record (A3)`, details);
  }
  if (phase === "denied") {
    return journalError(JOURNAL_ERRORS.CALL_DENIED, `${site}: call ${call} was denied; a denied call never runs`, details);
  }
  if (step === "decide") {
    return journalError(JOURNAL_ERRORS.DECISION_EXISTS, `${site}: call ${call} already has an approval decision`, details);
  }
  if (step === "start" && phase === "requested") {
    return journalError(
      JOURNAL_ERRORS.CALL_NOT_APPROVED,
      `${site}: call ${call} has no approval decision; record approvalDecided (by "bypass" when bypassing, A1) first`,
      details,
    );
  }
  if (step === "start") {
    return journalError(JOURNAL_ERRORS.CALL_ALREADY_STARTED, `${site}: call ${call} has already started`, details);
  }
  return journalError(JOURNAL_ERRORS.CALL_NOT_STARTED, `${site}: call ${call} has not started; record callStarted first`, details);
}

function notJson(site: string, cause: unknown) {
  return journalError(
    JOURNAL_ERRORS.INVALID_RECORD,
    `${site}: the record is not serializable JSON (${cause instanceof Error ? cause.message : String(cause)})`,
    {},
    cause,
  );
}
