import { canonicalJson } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS, journalError } from "../errors.js";
import { digestOf } from "../identity.js";
import { type CallPhase, type CallStep, nextPhase } from "../records/call-phase.js";
import { chainHash } from "../records/chain.js";
import { CanonicalText, encoderFor } from "../records/encode.js";
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
} from "../records/inputs.js";
import { CALL_OUTCOMES, type RecordKind } from "../records/records.js";
import { checkFields, type FieldRule, RecordSite, requireText, type Site } from "../records/validate.js";
import type { GroupOp } from "../store/store.js";
import type { GroupCommit } from "./group-commit.js";
import type { CallState, LiveState, SessionState } from "./live-state.js";

/** What each record kind holds beside its envelope (`at`, `kind`, `seq`, `sessionId`, and a call's `callId`), and how it is checked. */
const FIELDS: Readonly<Record<RecordKind, Readonly<Record<string, FieldRule>>>> = {
  session_opened: { bundleDir: "text?", executionIdentity: "text", identityInputs: "json", workspace: "text" },
  turn_prepared: { catalogFingerprints: "strings", selectionFingerprint: "text", turnId: "text" },
  call_requested: { alias: "text", qualifiedName: "text", turnId: "text" },
  approval_decided: {
    by: ["person", "policy", "bypass"],
    decision: ["approved", "denied"],
    key: "text",
    reason: "text?",
    scope: ["once", "session"],
    who: "text?",
  },
  call_started: { authorizedScopes: "strings?" },
  call_progress: { event: "json" },
  call_elicitation_asked: { elicitation: "count", message: "message", mode: ["form", "url"], provider: "text", schemaDigest: "text?", url: "text?" },
  call_elicitation_answered: {
    action: ["accept", "decline", "cancel"],
    by: ["person", "host", "runtime"],
    content: "json",
    contentDigest: "text?",
    elicitation: "count",
    reason: "text?",
    who: "text?",
  },
  call_finished: { breach: "json", code: "text?", imageDigests: "digests", message: "message", outcome: CALL_OUTCOMES, result: "json" },
  revoked: { reason: ["turn", "cancel", "close"], tool: "text" },
  turn_finished: { completed: "boolean", reason: "text?", turnId: "text" },
  session_closed: {},
};
/** Each kind's encoder, for its fields, its envelope and (for a call's records) `callId`. */
const ENCODERS = Object.fromEntries(
  Object.entries(FIELDS).map(([kind, fields]) => {
    const call = kind.startsWith("call_") || kind === "approval_decided" ? ["callId"] : [];
    const args = kind === "call_requested" ? ["args", "argsDigest"] : [];
    return [kind, encoderFor([...Object.keys(fields), ...call, ...args, "at", "kind", "seq", "sessionId"])];
  }),
) as unknown as Readonly<Record<RecordKind, (record: Readonly<Record<string, unknown>>) => string>>;

/**
 * Turns the runtime's calls into chained records: checks each against the session and call state machine (`nextPhase`), so an impossible history is refused when it is
 * written; builds the record as an object, encodes it once, hashes it onto its session's chain and queues it for the group commit.
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
    const values = checkFields(site, FIELDS.session_opened, input);
    this.commit.assertHealthy();
    if (this.state.session(sessionId) !== undefined)
      throw journalError(JOURNAL_ERRORS.SESSION_EXISTS, `${site}: the journal already holds this session; session ids must be unique`, { sessionId });
    const { executionIdentity, workspace, bundleDir } = values as { executionIdentity: string; workspace: string; bundleDir?: string };
    const session = this.state.addSession(sessionId, executionIdentity);
    try {
      this.append(site, session, "session_opened", values, (at) => ["session", session.ref, sessionId, executionIdentity, workspace, bundleDir ?? null, at]);
    } catch (error) {
      // A refused body (not serializable) must leave no half-made session behind.
      if (session.seq === 0) this.state.dropSession(sessionId);
      throw error;
    }
  }
  turnPrepared(input: TurnPreparedInput): void {
    this.sessionRecord("turnPrepared", "turn_prepared", input);
  }
  callRequested(input: CallRequestedInput): void {
    const callId = requireText("callRequested", "callId", input.callId);
    const site = new RecordSite("callRequested", "call", callId);
    const session = this.liveSession(site, input.sessionId);
    const values = checkFields(site, FIELDS.call_requested, input);
    if (this.state.phaseOf(session, callId) !== undefined) {
      throw journalError(
        JOURNAL_ERRORS.CALL_EXISTS,
        `${site}: session ${JSON.stringify(session.sessionId)} already has this call; call ids must be unique within their session`,
        { callId, sessionId: session.sessionId },
      );
    }
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
    if (argsDigest !== expected)
      throw journalError(JOURNAL_ERRORS.INVALID_RECORD, `${site}: argsDigest ${argsDigest} does not match the arguments (argumentsDigest gives ${expected})`, {
        callId,
        field: "argsDigest",
      });
    this.append(site, session, "call_requested", { ...values, args: new CanonicalText(argsText), argsDigest, callId });
    session.openCalls.set(callId, { callId, phase: "requested" });
    session.callCount += 1;
  }
  approvalDecided(input: ApprovalDecidedInput): void {
    const { session, call, values } = this.callRecord("approvalDecided", "approval_decided", input);
    call.decidedBy = values.by as CallState["decidedBy"];
    this.advance(session, call, "approval_decided", values.decision === "denied");
  }
  callStarted(input: CallStartedInput): Promise<void> {
    try {
      const { session, call } = this.callRecord("callStarted", "call_started", input);
      this.advance(session, call, "call_started");
      return this.commit.whenCommitted();
    } catch (error) {
      return Promise.reject(error);
    }
  }
  callProgress(input: CallProgressInput): void {
    this.callRecord("callProgress", "call_progress", input);
  }
  callElicitationAsked(input: CallElicitationAskedInput): void {
    this.callRecord("callElicitationAsked", "call_elicitation_asked", input);
  }
  callElicitationAnswered(input: CallElicitationAnsweredInput): void {
    this.callRecord("callElicitationAnswered", "call_elicitation_answered", input);
  }
  callFinished(input: CallFinishedInput): void {
    const { session, call } = this.callRecord("callFinished", "call_finished", input);
    this.advance(session, call, "call_finished");
  }
  revoked(input: RevokedInput): void {
    this.sessionRecord("revoked", "revoked", input);
  }
  turnFinished(input: TurnFinishedInput): void {
    this.sessionRecord("turnFinished", "turn_finished", input);
  }
  sessionClosed(input: { readonly sessionId: string }): void {
    const site = new RecordSite("sessionClosed", "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    if (session.openCalls.size > 0) {
      const open = Array.from(session.openCalls.keys());
      throw journalError(
        JOURNAL_ERRORS.CALLS_OPEN,
        `${site}: ${open.length} call(s) have no terminal record (${open.slice(0, 5).join(", ")}); record callFinished for each (e.g. "cancelled") before closing`,
        { sessionId: session.sessionId, openCalls: open },
      );
    }
    const seq = session.seq + 1;
    // Built with the group, after its frames: `headFrame` is then the closing frame.
    const close = (at: string): GroupOp => ["close", at, seq, session.head, session.headFrame, session.callCount, session.ref];
    this.append(site, session, "session_closed", {}, close, () => this.state.forgetSession(session.sessionId));
    session.closed = true;
  }
  /** Writes `interrupted` for a call a crash left open (A3); any open phase may have been cut short. */
  interrupt(session: SessionState, call: CallState, message: string): void {
    this.append("recovery", session, "call_finished", { callId: call.callId, code: "JOURNAL_INTERRUPTED", message, outcome: "interrupted" });
    this.advance(session, call, "call_finished");
  }
  private sessionRecord(method: string, kind: RecordKind, input: { readonly sessionId: string }): void {
    const site = new RecordSite(method, "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    this.append(site, session, kind, checkFields(site, FIELDS[kind], input));
  }
  private callRecord(method: string, kind: CallStep, input: CallRef): { session: SessionState; call: CallState; values: Record<string, unknown> } {
    const site = new RecordSite(method, "call", input.callId);
    const { session, call } = this.liveCall(site, input, kind);
    const values = checkFields(site, FIELDS[kind], input);
    values.callId = call.callId;
    this.append(site, session, kind, values);
    return { session, call, values };
  }
  private advance(session: SessionState, call: CallState, step: CallStep, denied = false): void {
    call.phase = nextPhase(call.phase, step, denied) ?? "finished";
    if (call.phase === "denied" || call.phase === "finished") this.state.endCall(session, call.callId, call.phase);
  }
  private liveSession(site: Site, sessionId: unknown): SessionState {
    const id = requireText(site, "sessionId", sessionId);
    this.commit.assertHealthy();
    const session = this.state.session(id);
    if (session === undefined)
      throw journalError(JOURNAL_ERRORS.UNKNOWN_SESSION, `${site}: no session ${JSON.stringify(id)} in this journal; record sessionOpened first`, {
        sessionId: id,
      });
    if (session.closed) throw journalError(JOURNAL_ERRORS.SESSION_CLOSED, `${site}: session ${JSON.stringify(id)} is closed`, { sessionId: id });
    return session;
  }
  private liveCall(site: Site, ref: CallRef, step: CallStep): { session: SessionState; call: CallState } {
    const session = this.liveSession(site, ref.sessionId);
    const callId = requireText(site, "callId", ref.callId);
    const call = session.openCalls.get(callId);
    const phase = call?.phase ?? this.state.phaseOf(session, callId);
    if (phase === undefined) {
      throw journalError(
        JOURNAL_ERRORS.UNKNOWN_CALL,
        `${site}: session ${JSON.stringify(session.sessionId)} has no call ${JSON.stringify(callId)}; record callRequested first`,
        { callId, sessionId: session.sessionId },
      );
    }
    if (call === undefined || nextPhase(phase, step) === undefined) throw phaseError(site, callId, phase, step);
    return { session, call };
  }
  /** Builds, encodes and hashes a record onto its session's chain and queues it, with the other write it implies. */
  private append(
    site: Site,
    session: SessionState,
    kind: RecordKind,
    values: Record<string, unknown>,
    also?: (at: string) => GroupOp,
    after?: () => void,
  ): void {
    const at = this.now();
    values.at = at;
    values.kind = kind;
    values.seq = session.seq + 1;
    values.sessionId = session.sessionId;
    let data: string;
    try {
      data = ENCODERS[kind](values);
    } catch (cause) {
      throw notJson(site, cause);
    }
    this.commit.makeRoom();
    const hash = chainHash(session.head, data);
    this.commit.enqueue(session, `${hash} ${data}`, also === undefined ? undefined : () => also(at), after);
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
  if (phase === "finished")
    return journalError(
      JOURNAL_ERRORS.TERMINAL_EXISTS,
      `${site}: call ${call} already has its terminal record; a call ends once, so record no more for it`,
      details,
    );
  if (phase === "denied") return journalError(JOURNAL_ERRORS.CALL_DENIED, `${site}: call ${call} was denied; a denied call never runs`, details);
  if (step === "approval_decided") return journalError(JOURNAL_ERRORS.DECISION_EXISTS, `${site}: call ${call} already has an approval decision`, details);
  if (step === "call_started" && phase === "requested") {
    return journalError(
      JOURNAL_ERRORS.CALL_NOT_APPROVED,
      `${site}: call ${call} has no approval decision; record approvalDecided (by "bypass" when bypassing) first`,
      details,
    );
  }
  if (step === "call_started") return journalError(JOURNAL_ERRORS.CALL_ALREADY_STARTED, `${site}: call ${call} has already started`, details);
  return journalError(JOURNAL_ERRORS.CALL_NOT_STARTED, `${site}: call ${call} has not started; record callStarted first`, details);
}

function notJson(site: Site, cause: unknown) {
  return journalError(
    JOURNAL_ERRORS.INVALID_RECORD,
    `${site}: the record is not serializable JSON (${cause instanceof Error ? cause.message : String(cause)})`,
    {},
    cause,
  );
}
