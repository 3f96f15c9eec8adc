import type { JsonValue } from "@openworker/tools-sdk";
import type { ApprovalDecider, ApprovalScope, CallOutcome, ElicitationAction, ElicitationAnswerer, ElicitationMode } from "./records.js";

/**
 * What `sessionOpened` records: the session's execution identity and the inputs that made it (A2).
 * @example
 * ```ts
 * journal.sessionOpened({ sessionId, executionIdentity: identity.identity, identityInputs: identity.components, workspace });
 * ```
 */
export interface SessionOpenedInput {
  readonly sessionId: string;
  readonly executionIdentity: string;
  /** The identity's inputs in a form an auditor can read (digests, names); never secrets (E6). */
  readonly identityInputs: JsonValue;
  readonly workspace: string;
  readonly bundleDir?: string;
}
/**
 * What `turnPrepared` records: the fingerprints of what the model was shown this turn (M2, M3).
 * @example
 * ```ts
 * journal.turnPrepared({ sessionId, turnId, selectionFingerprint, catalogFingerprints: { acer: "sha256:…" } });
 * ```
 */
export interface TurnPreparedInput {
  readonly sessionId: string;
  readonly turnId: string;
  readonly selectionFingerprint: string;
  /** Catalog fingerprint per MCP provider namespace. */
  readonly catalogFingerprints: Readonly<Record<string, string>>;
}
/**
 * What `callRequested` records.
 * @example
 * ```ts
 * journal.callRequested({ sessionId, turnId, callId, alias, qualifiedName, args });
 * ```
 */
export interface CallRequestedInput {
  readonly sessionId: string;
  readonly turnId: string;
  readonly callId: string;
  readonly alias: string;
  readonly qualifiedName: string;
  readonly args: JsonValue;
  readonly argsDigest?: string;
}
/**
 * What `approvalDecided` records: the decision, who made it, and the key it was decided under (A1).
 * @example
 * ```ts
 * journal.approvalDecided({ sessionId, callId, decision: "approved", by: "bypass", scope: "once", key });
 * ```
 */
export interface ApprovalDecidedInput {
  readonly sessionId: string;
  readonly callId: string;
  readonly decision: "approved" | "denied";
  readonly by: ApprovalDecider;
  /** The person, or the policy's name. */
  readonly who?: string;
  readonly scope: ApprovalScope;
  /** The approval key the decision was made under, as the runtime serializes it. */
  readonly key: string;
  readonly reason?: string;
}
/**
 * Identifies one call of one session.
 * @example
 * ```ts
 * await journal.callStarted({ sessionId, callId });
 * ```
 */
export interface CallRef {
  readonly sessionId: string;
  readonly callId: string;
}

/**
 * What `callStarted` records: the call, and for an MCP provider that runs OAuth (M8) the
 * scopes of the token the call runs under (never the token itself, E6).
 * @example
 * ```ts
 * await journal.callStarted({ sessionId, callId, authorizedScopes: ["notes:read"] });
 * ```
 */
export interface CallStartedInput extends CallRef {
  readonly authorizedScopes?: readonly string[];
}

/**
 * What `callProgress` records: one event, already bounded by the runtime (E2).
 * @example
 * ```ts
 * journal.callProgress({ sessionId, callId, event: { message: "indexing", fraction: 0.4 } });
 * ```
 */
export interface CallProgressInput extends CallRef {
  readonly event: JsonValue;
}

/**
 * What `callElicitationAsked` records: a provider's request for user input during the call (M9), its message redacted, a form's schema as a digest, a URL without
 * its query.
 * @example
 * ```ts
 * journal.callElicitationAsked({ sessionId, callId, elicitation: 1, provider: "notes", mode: "form", message: "Which folder?", schemaDigest });
 * ```
 */
export interface CallElicitationAskedInput extends CallRef {
  readonly elicitation: number;
  readonly provider: string;
  readonly mode: ElicitationMode;
  readonly message?: string;
  readonly schemaDigest?: string;
  readonly url?: string;
}

/**
 * What `callElicitationAnswered` records: the answer the provider received and who gave it (M9); accepted values as a digest, unless the host opts in to keep
 * them.
 * @example
 * ```ts
 * journal.callElicitationAnswered({ sessionId, callId, elicitation: 1, action: "decline", by: "runtime", reason: "no elicitor" });
 * ```
 */
export interface CallElicitationAnsweredInput extends CallRef {
  readonly elicitation: number;
  readonly action: ElicitationAction;
  readonly by: ElicitationAnswerer;
  readonly who?: string;
  readonly reason?: string;
  readonly contentDigest?: string;
  readonly content?: JsonValue;
}

/**
 * What `callFinished` records: the one terminal record of a call (A3). Images as digests only (T4).
 * @example
 * ```ts
 * journal.callFinished({ sessionId, callId, outcome: "timed_out", code: "TOOL_TIMEOUT", message: "no answer in 75 s" });
 * ```
 */
export interface CallFinishedInput extends CallRef {
  readonly outcome: CallOutcome;
  readonly code?: string;
  readonly message?: string;
  readonly result?: JsonValue;
  readonly imageDigests?: readonly string[];
  readonly breach?: JsonValue;
}
/**
 * What `revoked` records: a tool's access revoked at turn end, cancellation or close (T5).
 * @example
 * ```ts
 * journal.revoked({ sessionId, tool: "example.web_search", reason: "cancel" });
 * ```
 */
export interface RevokedInput {
  readonly sessionId: string;
  readonly tool: string;
  readonly reason: "turn" | "cancel" | "close";
}

/**
 * What `turnFinished` records.
 * @example
 * ```ts
 * journal.turnFinished({ sessionId, turnId, completed: false, reason: "limit" });
 * ```
 */
export interface TurnFinishedInput {
  readonly sessionId: string;
  readonly turnId: string;
  readonly completed: boolean;
  readonly reason?: string;
}
