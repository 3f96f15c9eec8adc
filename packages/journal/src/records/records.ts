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
 * The payload of each record kind.
 * @example
 * ```ts
 * type Finished = RecordBodies["call_finished"]; // { callId, outcome, code?, … }
 * ```
 */
export interface RecordBodies {
  session_opened: {
    executionIdentity: string;
    identityInputs: JsonValue;
    workspace: string;
    bundleDir?: string;
  };
  turn_prepared: {
    turnId: string;
    selectionFingerprint: string;
    catalogFingerprints: Readonly<Record<string, string>>;
  };
  call_requested: {
    turnId: string;
    callId: string;
    alias: string;
    qualifiedName: string;
    args: JsonValue;
    argsDigest: string;
  };
  approval_decided: {
    callId: string;
    decision: "approved" | "denied";
    by: ApprovalDecider;
    who?: string;
    scope: ApprovalScope;
    key: string;
    reason?: string;
  };
  call_started: { callId: string; authorizedScopes?: readonly string[] };
  call_progress: { callId: string; event: JsonValue };
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
 * RECORD_KINDS.length; // 10
 * ```
 */
export const RECORD_KINDS: readonly RecordKind[] = Object.freeze<RecordKind[]>([
  "session_opened",
  "turn_prepared",
  "call_requested",
  "approval_decided",
  "call_started",
  "call_progress",
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
