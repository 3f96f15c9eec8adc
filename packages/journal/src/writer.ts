import { canonicalJson, OpenWorkerError } from "@openworker/tools-sdk";
import { chainHash, GENESIS_HASH } from "./chain.js";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import type { GroupCommit } from "./group-commit.js";
import type { GroupOp } from "./group-writes.js";
import { digestOf } from "./identity.js";
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
import { frameLine, parseTailLine } from "./frames.js";
import { CALL_OUTCOMES, type RecordContent } from "./records.js";
import {
  approvalDecidedText,
  callFinishedText,
  callProgressText,
  callRequestedText,
  callStartedText,
  jsonChars,
  RepeatedChars,
  revokedText,
  sessionClosedText,
  sessionOpenedText,
  turnFinishedText,
  turnPreparedText,
} from "./record-text.js";
import {
  optionalText,
  requireBoolean,
  requireImageDigests,
  requireOneOf,
  requireStringMap,
  RecordSite,
  requireText,
  type Site,
} from "./validate.js";

/**
 * Turns the runtime's calls into chained records: checks each against the session and
 * call state machine (so an impossible history is refused when it is written, not found
 * by an auditor later), hashes it onto its session's chain, and queues it for the next
 * group commit.
 */
export class JournalWriter {
  private readonly clock = new IsoClock();
  private readonly aliasChars = new RepeatedChars();
  private readonly nameChars = new RepeatedChars();
  private readonly turnChars = new RepeatedChars();
  private readonly keyChars = new RepeatedChars();

  constructor(
    private readonly commit: GroupCommit,
    private readonly state: LiveState,
  ) {}

  sessionOpened(input: SessionOpenedInput): void {
    const sessionId = requireText("sessionOpened", "sessionId", input.sessionId);
    const site = new RecordSite("sessionOpened", "session", sessionId);
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
    const session = this.state.addSession(sessionId, executionIdentity);
    const at = this.clock.now();
    let data: string;
    try {
      data = sessionOpenedText(jsonChars(at), session.seq + 1, session.idText, bundleDir, executionIdentity, input.identityInputs, workspace);
    } catch (cause) {
      // A refused body (not serializable) must leave no half-made session behind.
      this.state.dropSession(sessionId);
      throw notJson(site, cause);
    }
    this.append(session, data, () => ["session", session.ref, sessionId, executionIdentity, workspace, bundleDir ?? null, at]);
  }

  turnPrepared(input: TurnPreparedInput): void {
    const site = new RecordSite("turnPrepared", "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    const turnId = requireText(site, "turnId", input.turnId);
    const selectionFingerprint = requireText(site, "selectionFingerprint", input.selectionFingerprint);
    const catalogFingerprints = requireStringMap(site, "catalogFingerprints", input.catalogFingerprints);
    this.append(session, turnPreparedText(this.clock.nowText(), session.seq + 1, session.idText, catalogFingerprints, selectionFingerprint, turnId));
  }

  callRequested(input: CallRequestedInput): void {
    const callId = requireText("callRequested", "callId", input.callId);
    const site = new RecordSite("callRequested", "call", callId);
    const session = this.liveSession(site, input.sessionId);
    const turnId = requireText(site, "turnId", input.turnId);
    const alias = requireText(site, "alias", input.alias);
    const qualifiedName = requireText(site, "qualifiedName", input.qualifiedName);
    if (this.state.hasCall(session, callId)) {
      throw journalError(
        JOURNAL_ERRORS.CALL_EXISTS,
        `${site}: session ${JSON.stringify(session.sessionId)} already has this call; call ids must be unique within their session`,
        { callId, sessionId: session.sessionId },
      );
    }
    // The arguments are canonicalized once: for their digest, and as they are stored.
    let argsText: string | undefined;
    try {
      argsText = canonicalJson(input.args) as string | undefined;
    } catch (cause) {
      throw notJson(site, cause);
    }
    if (argsText === undefined) throw notJson(site, new TypeError("args is not a JSON value"));
    const expected = digestOf(argsText);
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
    const idText = jsonChars(callId);
    this.append(
      session,
      callRequestedText(
        this.clock.nowText(),
        session.seq + 1,
        session.idText,
        this.aliasChars.of(alias),
        argsText,
        argsDigest,
        idText,
        this.nameChars.of(qualifiedName),
        this.turnChars.of(turnId),
      ),
    );
    session.openCalls.add({ callId, idText, sessionId: session.sessionId, phase: "requested" });
    session.callCount += 1;
  }

  approvalDecided(input: ApprovalDecidedInput): void {
    const site = new RecordSite("approvalDecided", "call", input.callId);
    const { session, call } = this.liveCall(site, input, "decide");
    const decision = requireOneOf(site, "decision", input.decision, ["approved", "denied"] as const);
    const by = requireOneOf(site, "by", input.by, ["person", "policy", "bypass"] as const);
    const who = optionalText(site, "who", input.who);
    const scope = requireOneOf(site, "scope", input.scope, ["once", "session"] as const);
    const key = requireText(site, "key", input.key);
    const reason = optionalText(site, "reason", input.reason);
    this.append(session, approvalDecidedText(this.clock.nowText(), session.seq + 1, session.idText, by, call.idText, decision, this.keyChars.of(key), reason, scope, who));
    call.decidedBy = by;
    if (decision === "denied") this.endCall(session, call, "denied");
    else call.phase = "approved";
  }

  callStarted(input: CallRef): Promise<void> {
    try {
      const site = new RecordSite("callStarted", "call", input.callId);
      const { session, call } = this.liveCall(site, input, "start");
      this.append(session, callStartedText(this.clock.nowText(), session.seq + 1, session.idText, call.idText));
      call.phase = "started";
      return this.commit.whenDurable();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  callProgress(input: CallProgressInput): void {
    const site = new RecordSite("callProgress", "call", input.callId);
    const { session, call } = this.liveCall(site, input, "progress");
    let data: string;
    try {
      data = callProgressText(this.clock.nowText(), session.seq + 1, session.idText, call.idText, input.event);
    } catch (cause) {
      throw notJson(site, cause);
    }
    this.append(session, data);
  }

  callFinished(input: CallFinishedInput): void {
    const site = new RecordSite("callFinished", "call", input.callId);
    const { session, call } = this.liveCall(site, input, "finish");
    const outcome = requireOneOf(site, "outcome", input.outcome, CALL_OUTCOMES);
    const code = optionalText(site, "code", input.code);
    const message = typeof input.message === "string" ? input.message : undefined;
    const imageDigests = requireImageDigests(site, input.imageDigests);
    let data: string;
    try {
      data = callFinishedText(this.clock.nowText(), session.seq + 1, session.idText, input.breach, call.idText, code, imageDigests, message, outcome, input.result);
    } catch (cause) {
      throw notJson(site, cause);
    }
    this.append(session, data);
    this.endCall(session, call, "finished");
  }

  revoked(input: RevokedInput): void {
    const site = new RecordSite("revoked", "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    const tool = requireText(site, "tool", input.tool);
    const reason = requireOneOf(site, "reason", input.reason, ["turn", "cancel", "close"] as const);
    this.append(session, revokedText(this.clock.nowText(), session.seq + 1, session.idText, reason, tool));
  }

  turnFinished(input: TurnFinishedInput): void {
    const site = new RecordSite("turnFinished", "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    const turnId = requireText(site, "turnId", input.turnId);
    const completed = requireBoolean(site, "completed", input.completed);
    const reason = optionalText(site, "reason", input.reason);
    this.append(session, turnFinishedText(this.clock.nowText(), session.seq + 1, session.idText, completed, reason, turnId));
  }

  sessionClosed(input: { readonly sessionId: string }): void {
    const site = new RecordSite("sessionClosed", "session", input.sessionId);
    const session = this.liveSession(site, input.sessionId);
    if (session.openCalls.size > 0) {
      const open = Array.from(session.openCalls.values(), (call) => call.callId);
      throw journalError(
        JOURNAL_ERRORS.CALLS_OPEN,
        `${site}: ${open.length} call(s) have no terminal record (${open.slice(0, 5).join(", ")}); record callFinished for each (e.g. "cancelled") before closing`,
        { sessionId: session.sessionId, openCalls: open },
      );
    }
    const at = this.clock.now();
    const seq = session.seq + 1;
    this.append(
      session,
      sessionClosedText(jsonChars(at), seq, session.idText),
      // Built with the group, after its frames: `headFrame` is then the closing frame, and
      // `head` its hash (`null` when the commit thread hashes it: it fills it in).
      () => ["close", at, seq, session.head ?? null, session.headFrame, session.callCount, session.ref],
      () => this.state.forgetSession(session.sessionId),
    );
    session.closed = true;
  }

  /**
   * Writes `interrupted` for a call a crash left open (A3). Recovery only: it bypasses
   * the phase check because any open phase may have been cut short.
   */
  interrupt(session: SessionState, call: CallState, message: string): void {
    this.append(session, callFinishedText(this.clock.nowText(), session.seq + 1, session.idText, undefined, call.idText, "JOURNAL_INTERRUPTED", undefined, message, "interrupted", undefined));
    this.endCall(session, call, "finished");
  }

  /**
   * Re-applies one tail-log line a crash left uncommitted (see `TailLog`), through the
   * same methods that wrote it, with the clock pinned to its `at`: the record is rebuilt
   * byte for byte, so its hash must come out as stored. Skips (changing nothing) a line
   * that is torn, already committed, or of a closed session; returns a {@link LostLine}
   * for a record the database lacks that cannot be applied (records before it are
   * missing, or it does not rebuild to its place in the chain); throws `JOURNAL_DAMAGED`
   * if a line that should apply produces another hash.
   */
  replay(line: string): ReplayResult {
    const parsed = parseTailLine(line);
    if (parsed === undefined) return "skipped";
    let content: ReplayContent;
    try {
      content = JSON.parse(parsed.data) as ReplayContent;
    } catch {
      return "skipped";
    }
    if (typeof content !== "object" || content === null || typeof content.sessionId !== "string" || typeof content.seq !== "number") {
      return "skipped";
    }
    const lost = (chainSeq: number | undefined): LostLine => ({ sessionId: content.sessionId, seq: content.seq as number, chainSeq });
    let session: SessionState | undefined;
    try {
      session = this.state.session(content.sessionId);
    } catch (error) {
      // A session whose head row cannot be read takes no record (see `LiveState`).
      if (OpenWorkerError.hasCode(error, JOURNAL_ERRORS.DAMAGED)) return lost(undefined);
      throw error;
    }
    const next = session === undefined ? 1 : session.seq + 1;
    if (session?.closed === true || content.seq < next) return "skipped";
    if (content.seq > next) return lost(next - 1);
    if ((session === undefined) !== (content.kind === "session_opened")) return "skipped";
    // A line written without its hash (the commit thread was to hash it) is held to its
    // write's checksum instead (see `TailLog.read`), and must rebuild to the same text.
    const expected = chainHash(session === undefined ? GENESIS_HASH : this.commit.headOf(session), parsed.data);
    if (parsed.hash !== undefined && expected !== parsed.hash) return lost(next - 1);
    this.clock.pin(content.at);
    try {
      replayInto(this, content);
    } catch {
      return lost(next - 1);
    } finally {
      this.clock.unpin();
    }
    const after = this.state.session(content.sessionId);
    if (after === undefined || this.commit.headOf(after) !== expected) {
      throw journalError(
        JOURNAL_ERRORS.DAMAGED,
        `journal tail log: record ${content.seq} of session ${JSON.stringify(content.sessionId)} did not rebuild to its stored hash; keep the -tail file and report this`,
        { sessionId: content.sessionId, seq: content.seq },
      );
    }
    return "applied";
  }

  private endCall(session: SessionState, call: CallState, phase: "denied" | "finished"): void {
    call.phase = phase;
    session.openCalls.delete(call.callId);
    session.endedCalls.add(call.callId);
  }

  private liveSession(site: Site, sessionId: unknown): SessionState {
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

  private liveCall(site: Site, ref: CallRef, step: CallStep): { session: SessionState; call: CallState } {
    const session = this.liveSession(site, ref.sessionId);
    const callId = requireText(site, "callId", ref.callId);
    const call = session.openCalls.get(callId);
    if (call === undefined) {
      const ended = this.state.endedCall(session, callId);
      if (ended === undefined) {
        throw journalError(
          JOURNAL_ERRORS.UNKNOWN_CALL,
          `${site}: session ${JSON.stringify(session.sessionId)} has no call ${JSON.stringify(callId)}; record callRequested first`,
          { callId, sessionId: session.sessionId },
        );
      }
      throw phaseError(site, callId, ended, step);
    }
    if (!ALLOWED[step].includes(call.phase)) throw phaseError(site, callId, call.phase, step);
    return { session, call };
  }

  /**
   * Queues a record's text (its envelope stamped with `session.seq + 1` and the clock's
   * `now()`, see `record-text.ts`) with the other write it implies (built with the group)
   * and what runs once it is committed. It is hashed onto its session's chain now, or,
   * while the commit thread hashes (see `GroupCommit.hashOnThread`), queued bare for the
   * thread, which is told the chain's head if it may not know it yet.
   */
  private append(session: SessionState, data: string, alsoWrite?: () => GroupOp, afterCommit?: () => void): void {
    this.commit.makeRoom();
    if (this.commit.hashOnThread) {
      const seed = session.head;
      session.head = undefined;
      session.unhashed = true;
      this.commit.enqueueRecord(session, data, alsoWrite, afterCommit, seed);
    } else {
      const hash = chainHash(this.commit.headOf(session), data);
      this.commit.enqueueRecord(session, frameLine(hash, data), alsoWrite, afterCommit);
      session.head = hash;
    }
    session.seq += 1;
  }
}

/**
 * `new Date().toISOString()`, formatted at most once per millisecond: records appended
 * within the same millisecond share the string, which is exactly what each would have
 * got on its own (the format has millisecond resolution), so `at` stays the true
 * append time of every record. During replay it is pinned to the stored record's `at`,
 * which may be any string.
 */
class IsoClock {
  private millis = -1;
  private text = "";
  private pinned: string | undefined;
  private pinnedChars = "";

  /** Replay only: `now()` returns this until `unpin`. */
  pin(at: unknown): void {
    this.pinned = typeof at === "string" ? at : undefined;
    if (this.pinned !== undefined) this.pinnedChars = jsonChars(this.pinned);
  }

  unpin(): void {
    this.pinned = undefined;
  }

  now(): string {
    if (this.pinned !== undefined) return this.pinned;
    const millis = Date.now();
    if (millis !== this.millis) {
      this.millis = millis;
      this.text = new Date(millis).toISOString();
    }
    return this.text;
  }

  /** `now()` as JSON puts it between quotes: the ISO text itself (digits, `-`, `:`, `.`, `T`, `Z`, `+`: nothing to escape). */
  nowText(): string {
    return this.pinned !== undefined ? this.pinnedChars : this.now();
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

function phaseError(site: Site, callId: string, phase: CallPhase, step: CallStep) {
  const call = JSON.stringify(callId);
  const details = { callId, phase };
  if (phase === "finished") {
    return journalError(JOURNAL_ERRORS.TERMINAL_EXISTS, `${site}: call ${call} already has its terminal record; a call ends once, so record no more for it`, details);
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
      `${site}: call ${call} has no approval decision; record approvalDecided (by "bypass" when bypassing) first`,
      details,
    );
  }
  if (step === "start") {
    return journalError(JOURNAL_ERRORS.CALL_ALREADY_STARTED, `${site}: call ${call} has already started`, details);
  }
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

/**
 * A tail-log record the database lacks that could not be replayed: the session, the
 * record's `seq`, and where the session's chain in the database ends (`undefined` when
 * its head row cannot be read).
 */
export interface LostLine {
  readonly sessionId: string;
  readonly seq: number;
  readonly chainSeq: number | undefined;
}

/** What replaying one tail-log line did. */
export type ReplayResult = "applied" | "skipped" | LostLine;

/** A record read back from the tail log, before it is trusted. */
type ReplayContent = { readonly sessionId: string; readonly seq: unknown; readonly at: unknown; readonly kind: unknown };

/** Calls the writer method that made a record of this kind, with the record's own fields. */
function replayInto(writer: JournalWriter, record: ReplayContent): void {
  // Its fields are checked by the method it goes to, as when it was first written.
  const content = record as RecordContent;
  switch (content.kind) {
    case "session_opened":
      return writer.sessionOpened(content);
    case "turn_prepared":
      return writer.turnPrepared(content);
    case "call_requested":
      return writer.callRequested(content);
    case "approval_decided":
      return writer.approvalDecided(content);
    case "call_started":
      // Durable already (it is being replayed); the promise settles with the next commit.
      return void writer.callStarted(content).catch(() => undefined);
    case "call_progress":
      return writer.callProgress(content);
    case "call_finished":
      return writer.callFinished(content);
    case "revoked":
      return writer.revoked(content);
    case "turn_finished":
      return writer.turnFinished(content);
    case "session_closed":
      return writer.sessionClosed(content);
  }
}
