import { canonicalJson } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS, journalError } from "../errors.js";
import { digestOf } from "../identity.js";
import { type CallPhase, type CallStep, nextPhase } from "../records/call-phase.js";
import { chainHash } from "../records/chain.js";
import { CanonicalText, encodeRecord } from "../records/encode.js";
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
} from "../records/inputs.js";
import { CALL_OUTCOMES, type RecordContent } from "../records/records.js";
import type { GroupOp } from "../store/store.js";
import {
  optionalText,
  RecordSite,
  requireBoolean,
  requireImageDigests,
  requireOneOf,
  requireStringMap,
  requireText,
  type Site,
} from "../records/validate.js";
import type { GroupCommit } from "./group-commit.js";
import type { CallState, LiveState, SessionState } from "./live-state.js";

/**
 * Turns the runtime's calls into chained records: checks each against the session and call state machine
 * (`nextPhase`), so an impossible history is refused when it is written; builds the record as an object,
 * encodes it once, hashes it onto its session's chain and queues it for the group commit.
 */
export class JournalWriter {
  private millis = -1;
  private iso = "";
  /** Replaying a legacy tail log only: the `at` of the record being rebuilt. */
  pinnedAt: string | undefined;

  constructor(
    private readonly commit: GroupCommit,
    readonly state: LiveState,
  ) {}

  sessionOpened(input: SessionOpenedInput): void {
    const sessionId = requireText("sessionOpened", "sessionId", input.sessionId);
    const site = new RecordSite("sessionOpened", "session", sessionId);
    const executionIdentity = requireText(site, "executionIdentity", input.executionIdentity);
    const workspace = requireText(site, "workspace", input.workspace);
    const bundleDir = optionalText(site, "bundleDir", input.bundleDir);
    this.commit.assertHealthy();
    if (this.state.session(sessionId) !== undefined) throw journalError(JOURNAL_ERRORS.SESSION_EXISTS, `${site}: the journal already holds this session; session ids must be unique`, { sessionId });
    const session = this.state.addSession(sessionId, executionIdentity);
    const at = this.now();
    const record = { at, bundleDir, executionIdentity, identityInputs: input.identityInputs, kind: "session_opened", seq: 1, sessionId, workspace } as const;
    try {
      this.append(site, session, record, () => ["session", session.ref, sessionId, executionIdentity, workspace, bundleDir ?? null, at]);
    } catch (error) {
      // A refused body (not serializable) must leave no half-made session behind.
      if (session.seq === 0) this.state.dropSession(sessionId);
      throw error;
    }
  }

  turnPrepared(input: TurnPreparedInput): void {
    const site = new RecordSite("turnPrepared", "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    const turnId = requireText(site, "turnId", input.turnId);
    const selectionFingerprint = requireText(site, "selectionFingerprint", input.selectionFingerprint);
    const catalogFingerprints = requireStringMap(site, "catalogFingerprints", input.catalogFingerprints);
    this.append(site, session, { at: this.now(), catalogFingerprints, kind: "turn_prepared", selectionFingerprint, seq: session.seq + 1, sessionId: session.sessionId, turnId });
  }

  callRequested(input: CallRequestedInput): void {
    const callId = requireText("callRequested", "callId", input.callId);
    const site = new RecordSite("callRequested", "call", callId);
    const session = this.liveSession(site, input.sessionId);
    const turnId = requireText(site, "turnId", input.turnId);
    const alias = requireText(site, "alias", input.alias);
    const qualifiedName = requireText(site, "qualifiedName", input.qualifiedName);
    if (this.state.phaseOf(session, callId) !== undefined) throw journalError(JOURNAL_ERRORS.CALL_EXISTS, `${site}: session ${JSON.stringify(session.sessionId)} already has this call; call ids must be unique within their session`, { callId, sessionId: session.sessionId });
    let argsText: string | undefined;
    try {
      argsText = canonicalJson(input.args) as string | undefined;
    } catch (cause) {
      throw notJson(site, cause);
    }
    if (argsText === undefined) throw notJson(site, new TypeError("args is not a JSON value"));
    const expected = digestOf(argsText);
    // Computed here when the caller leaves it out (the runtime does); a given digest must match.
    const argsDigest = input.argsDigest === undefined ? expected : requireText(site, "argsDigest", input.argsDigest);
    if (argsDigest !== expected) throw journalError(JOURNAL_ERRORS.INVALID_RECORD, `${site}: argsDigest ${argsDigest} does not match the arguments (argumentsDigest gives ${expected})`, { callId, field: "argsDigest" });
    const record = { alias, args: new CanonicalText(argsText), argsDigest, at: this.now(), callId, kind: "call_requested", qualifiedName, seq: session.seq + 1, sessionId: session.sessionId, turnId } as const;
    this.append(site, session, record as unknown as RecordContent);
    session.openCalls.set(callId, { callId, phase: "requested" });
    session.callCount += 1;
  }

  approvalDecided(input: ApprovalDecidedInput): void {
    const site = new RecordSite("approvalDecided", "call", input.callId);
    const { session, call } = this.liveCall(site, input, "approval_decided");
    const decision = requireOneOf(site, "decision", input.decision, ["approved", "denied"] as const);
    const by = requireOneOf(site, "by", input.by, ["person", "policy", "bypass"] as const);
    const who = optionalText(site, "who", input.who);
    const scope = requireOneOf(site, "scope", input.scope, ["once", "session"] as const);
    const key = requireText(site, "key", input.key);
    const reason = optionalText(site, "reason", input.reason);
    const record = { at: this.now(), by, callId: call.callId, decision, key, kind: "approval_decided", reason, scope, seq: session.seq + 1, sessionId: session.sessionId, who } as const;
    this.append(site, session, record);
    call.decidedBy = by;
    this.advance(session, call, "approval_decided", decision === "denied");
  }

  callStarted(input: CallRef): Promise<void> {
    try {
      const site = new RecordSite("callStarted", "call", input.callId);
      const { session, call } = this.liveCall(site, input, "call_started");
      this.append(site, session, { at: this.now(), callId: call.callId, kind: "call_started", seq: session.seq + 1, sessionId: session.sessionId });
      this.advance(session, call, "call_started");
      return this.commit.whenCommitted();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  callProgress(input: CallProgressInput): void {
    const site = new RecordSite("callProgress", "call", input.callId);
    const { session, call } = this.liveCall(site, input, "call_progress");
    this.append(site, session, { at: this.now(), callId: call.callId, event: input.event, kind: "call_progress", seq: session.seq + 1, sessionId: session.sessionId });
  }

  callFinished(input: CallFinishedInput): void {
    const site = new RecordSite("callFinished", "call", input.callId);
    const { session, call } = this.liveCall(site, input, "call_finished");
    const outcome = requireOneOf(site, "outcome", input.outcome, CALL_OUTCOMES);
    const code = optionalText(site, "code", input.code);
    const message = typeof input.message === "string" ? input.message : undefined;
    const imageDigests = requireImageDigests(site, input.imageDigests);
    this.finish(site, session, call, { outcome, code, message, imageDigests, result: input.result, breach: input.breach });
  }

  revoked(input: RevokedInput): void {
    const site = new RecordSite("revoked", "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    const tool = requireText(site, "tool", input.tool);
    const reason = requireOneOf(site, "reason", input.reason, ["turn", "cancel", "close"] as const);
    this.append(site, session, { at: this.now(), kind: "revoked", reason, seq: session.seq + 1, sessionId: session.sessionId, tool });
  }

  turnFinished(input: TurnFinishedInput): void {
    const site = new RecordSite("turnFinished", "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    const turnId = requireText(site, "turnId", input.turnId);
    const completed = requireBoolean(site, "completed", input.completed);
    const reason = optionalText(site, "reason", input.reason);
    this.append(site, session, { at: this.now(), completed, kind: "turn_finished", reason, seq: session.seq + 1, sessionId: session.sessionId, turnId });
  }

  sessionClosed(input: { readonly sessionId: string }): void {
    const site = new RecordSite("sessionClosed", "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    if (session.openCalls.size > 0) {
      const open = Array.from(session.openCalls.keys());
      throw journalError(JOURNAL_ERRORS.CALLS_OPEN, `${site}: ${open.length} call(s) have no terminal record (${open.slice(0, 5).join(", ")}); record callFinished for each (e.g. "cancelled") before closing`, { sessionId: session.sessionId, openCalls: open });
    }
    const at = this.now();
    const seq = session.seq + 1;
    this.append(
      site,
      session,
      { at, kind: "session_closed", seq, sessionId: session.sessionId },
      // Built with the group, after its frames: `headFrame` is then the closing frame.
      () => ["close", at, seq, session.head, session.headFrame, session.callCount, session.ref],
      () => this.state.forgetSession(session.sessionId),
    );
    session.closed = true;
  }

  /** Writes `interrupted` for a call a crash left open (A3); any open phase may have been cut short. */
  interrupt(session: SessionState, call: CallState, message: string): void {
    this.finish("recovery", session, call, { outcome: "interrupted", code: "JOURNAL_INTERRUPTED", message });
  }

  private finish(
    site: Site,
    session: SessionState,
    call: CallState,
    end: { outcome: (typeof CALL_OUTCOMES)[number]; code?: string | undefined; message?: string | undefined; imageDigests?: readonly string[] | undefined; result?: unknown; breach?: unknown },
  ): void {
    const record = {
      at: this.now(),
      breach: end.breach,
      callId: call.callId,
      code: end.code,
      imageDigests: end.imageDigests,
      kind: "call_finished",
      message: end.message,
      outcome: end.outcome,
      result: end.result,
      seq: session.seq + 1,
      sessionId: session.sessionId,
    };
    this.append(site, session, record as RecordContent);
    this.advance(session, call, "call_finished");
  }

  private advance(session: SessionState, call: CallState, step: CallStep, denied = false): void {
    call.phase = nextPhase(call.phase, step, denied) ?? "finished";
    if (call.phase === "denied" || call.phase === "finished") this.state.endCall(session, call.callId, call.phase);
  }

  private liveSession(site: Site, sessionId: unknown): SessionState {
    const id = requireText(site, "sessionId", sessionId);
    this.commit.assertHealthy();
    const session = this.state.session(id);
    if (session === undefined) throw journalError(JOURNAL_ERRORS.UNKNOWN_SESSION, `${site}: no session ${JSON.stringify(id)} in this journal; record sessionOpened first`, { sessionId: id });
    if (session.closed) throw journalError(JOURNAL_ERRORS.SESSION_CLOSED, `${site}: session ${JSON.stringify(id)} is closed`, { sessionId: id });
    return session;
  }

  private liveCall(site: Site, ref: CallRef, step: CallStep): { session: SessionState; call: CallState } {
    const session = this.liveSession(site, ref.sessionId);
    const callId = requireText(site, "callId", ref.callId);
    const call = session.openCalls.get(callId);
    const phase = call?.phase ?? this.state.phaseOf(session, callId);
    if (phase === undefined) throw journalError(JOURNAL_ERRORS.UNKNOWN_CALL, `${site}: session ${JSON.stringify(session.sessionId)} has no call ${JSON.stringify(callId)}; record callRequested first`, { callId, sessionId: session.sessionId });
    if (call === undefined || nextPhase(phase, step) === undefined) throw phaseError(site, callId, phase, step);
    return { session, call };
  }

  /** Encodes a record, hashes it onto its session's chain and queues it, with the other write it implies. */
  private append(site: Site, session: SessionState, record: RecordContent | Readonly<Record<string, unknown>>, also?: () => GroupOp, after?: () => void): void {
    let data: string;
    try {
      data = encodeRecord(record);
    } catch (cause) {
      throw notJson(site, cause);
    }
    this.commit.makeRoom();
    const hash = chainHash(session.head, data);
    this.commit.enqueue(session, `${hash} ${data}`, also, after);
    session.head = hash;
    session.seq += 1;
  }

  /** `new Date().toISOString()`, formatted at most once per millisecond. */
  private now(): string {
    if (this.pinnedAt !== undefined) return this.pinnedAt;
    const millis = Date.now();
    if (millis !== this.millis) {
      this.millis = millis;
      this.iso = new Date(millis).toISOString();
    }
    return this.iso;
  }
}

function phaseError(site: Site, callId: string, phase: CallPhase, step: CallStep) {
  const call = JSON.stringify(callId);
  const details = { callId, phase };
  if (phase === "finished") return journalError(JOURNAL_ERRORS.TERMINAL_EXISTS, `${site}: call ${call} already has its terminal record; a call ends once, so record no more for it`, details);
  if (phase === "denied") return journalError(JOURNAL_ERRORS.CALL_DENIED, `${site}: call ${call} was denied; a denied call never runs`, details);
  if (step === "approval_decided") return journalError(JOURNAL_ERRORS.DECISION_EXISTS, `${site}: call ${call} already has an approval decision`, details);
  if (step === "call_started" && phase === "requested") return journalError(JOURNAL_ERRORS.CALL_NOT_APPROVED, `${site}: call ${call} has no approval decision; record approvalDecided (by "bypass" when bypassing) first`, details);
  if (step === "call_started") return journalError(JOURNAL_ERRORS.CALL_ALREADY_STARTED, `${site}: call ${call} has already started`, details);
  return journalError(JOURNAL_ERRORS.CALL_NOT_STARTED, `${site}: call ${call} has not started; record callStarted first`, details);
}

function notJson(site: Site, cause: unknown) {
  return journalError(JOURNAL_ERRORS.INVALID_RECORD, `${site}: the record is not serializable JSON (${cause instanceof Error ? cause.message : String(cause)})`, {}, cause);
}
