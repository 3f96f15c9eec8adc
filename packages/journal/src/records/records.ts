import type { JsonValue } from "@openworker/tools-sdk";
import type { CallOutcome as ExecutionOutcome } from "@openworker/tools-sdk/internal/execution";

/**
 * How a call ended: one of the outcomes of the call boundary (A3), plus `interrupted`, which only recovery writes for a call a crash left without a
 * terminal record.
 * @example
 * ```ts
 * const outcome: CallOutcome = "interrupted";
 * ```
 */
export type CallOutcome = ExecutionOutcome | "interrupted";

/**
 * Every outcome a terminal record may carry, in a stable order.
 * @example
 * ```ts
 * CALL_OUTCOMES.includes("crashed"); // true
 * ```
 */
export const CALL_OUTCOMES: readonly CallOutcome[] = Object.freeze([
  "succeeded",
  "failed",
  "timed_out",
  "cancelled",
  "limit_exceeded",
  "crashed",
  "interrupted",
]);

/**
 * Who decided an approval (A1): a person, a policy, or bypass (which skips only the person).
 * @example
 * ```ts
 * const by: ApprovalDecider = "policy";
 * ```
 */
export type ApprovalDecider = "person" | "policy" | "bypass";
/**
 * How far an approval reaches: this call's exact arguments, or the whole execution identity.
 * @example
 * ```ts
 * const scope: ApprovalScope = "once";
 * ```
 */
export type ApprovalScope = "once" | "session";

/**
 * How a provider asked for user input during a call (M9): fill in a form, or open a URL.
 * @example
 * ```ts
 * const mode: ElicitationMode = "url";
 * ```
 */
export type ElicitationMode = "form" | "url";
/**
 * How an elicitation was answered, as the provider received it: accepted, declined, or cancelled.
 * @example
 * ```ts
 * const action: ElicitationAction = "decline";
 * ```
 */
export type ElicitationAction = "accept" | "decline" | "cancel";
/**
 * Who answered an elicitation (M9): a person through the host's elicitor, the host's elicitor with no person to ask (a script, a command without a terminal), or
 * the runtime failing closed (no elicitor, a timeout, the call's end, a failing elicitor, a malformed answer).
 * @example
 * ```ts
 * const by: ElicitationAnswerer = "runtime";
 * ```
 */
export type ElicitationAnswerer = "person" | "host" | "runtime";

/**
 * The payload of each record kind.
 * @example
 * ```ts
 * type Finished = RecordBodies["call_finished"]; // { callId, outcome, code?, … }
 * ```
 */
export interface RecordBodies {
  session_opened: {
    executionIdentity: string;
    /** The identity's inputs in a form an auditor can read (digests, names); never secrets (E6). */
    identityInputs: JsonValue;
    workspace: string;
    bundleDir?: string;
  };
  /** The fingerprints of what the model was shown this turn (M2, M3), with a catalog fingerprint per MCP provider namespace. */
  turn_prepared: { turnId: string; selectionFingerprint: string; catalogFingerprints: Readonly<Record<string, string>> };
  call_requested: { turnId: string; callId: string; alias: string; qualifiedName: string; args: JsonValue; argsDigest: string };
  /** `who`: the person, or the policy's name; `key`: the approval key the decision was made under, as the runtime serializes it (A1). */
  approval_decided: { callId: string; decision: "approved" | "denied"; by: ApprovalDecider; who?: string; scope: ApprovalScope; key: string; reason?: string };
  /** For an MCP provider that runs OAuth (M8): the scopes of the token the call runs under, never the token itself (E6). */
  call_started: { callId: string; authorizedScopes?: readonly string[] };
  call_progress: { callId: string; event: JsonValue };
  call_elicitation_asked: {
    callId: string;
    /** The elicitation's number within its call, from 1. */
    elicitation: number;
    provider: string;
    mode: ElicitationMode;
    message?: string;
    /** Form mode: the digest of the schema the provider asked to fill in. */
    schemaDigest?: string;
    /** URL mode: where the user was sent, without its query or fragment. */
    url?: string;
  };
  call_elicitation_answered: {
    callId: string;
    elicitation: number;
    action: ElicitationAction;
    by: ElicitationAnswerer;
    who?: string;
    reason?: string;
    /** An accepted form: the digest of what was sent back. */
    contentDigest?: string;
    /** An accepted form's values, only when the host opts in. */
    content?: JsonValue;
  };
  call_finished: {
    callId: string;
    outcome: CallOutcome;
    code?: string;
    message?: string;
    result?: JsonValue;
    imageDigests?: readonly string[];
    breach?: JsonValue;
  };
  revoked: { tool: string; reason: "turn" | "cancel" | "close" };
  turn_finished: { turnId: string; completed: boolean; reason?: string };
  session_closed: Record<string, never>;
}
/**
 * The kind of a journal record.
 * @example
 * ```ts
 * const kind: RecordKind = "call_started";
 * ```
 */
export type RecordKind = keyof RecordBodies;

/**
 * Every record kind, in the order a session meets them.
 * @example
 * ```ts
 * RECORD_KINDS.length; // 12
 * ```
 */
export const RECORD_KINDS: readonly RecordKind[] = Object.freeze<RecordKind[]>([
  "session_opened",
  "turn_prepared",
  "call_requested",
  "approval_decided",
  "call_started",
  "call_progress",
  "call_elicitation_asked",
  "call_elicitation_answered",
  "call_finished",
  "revoked",
  "turn_finished",
  "session_closed",
]);

/**
 * The fields every record shares; `seq` counts from 1 within a session.
 * @example
 * ```ts
 * const { seq, at } = journal.timeline({ sessionId: "ses_1", callId })[0]!;
 * ```
 */
export interface RecordEnvelope {
  readonly sessionId: string;
  readonly seq: number;
  /** ISO-8601 UTC time the record was appended. */
  readonly at: string;
}
/**
 * The part of a record the chain hash covers: envelope, kind and payload.
 * @example
 * ```ts
 * const { hash, prevHash, ...content } = record; // content is a RecordContent
 * ```
 */
export type RecordContent = {
  [K in RecordKind]: RecordEnvelope & { readonly kind: K } & Readonly<RecordBodies[K]>;
}[RecordKind];

/**
 * One journal record as read back: its content plus its link in the session's chain, `hash = sha256(prevHash + canonicalJson(content))`.
 * @example
 * ```ts
 * for (const record of journal.timeline({ sessionId: "ses_1", callId: "call-1" })) console.log(record.seq, record.kind);
 * ```
 */
export type JournalRecord = RecordContent & { readonly prevHash: string; readonly hash: string };
