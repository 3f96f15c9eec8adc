import type { RecordBodies, RecordKind } from "./records.js";

/** What a record method takes: the session, and the kind's fields (see {@link RecordBodies}); the journal adds `at`, `kind` and `seq`. */
type InputOf<K extends RecordKind> = { readonly sessionId: string } & Readonly<RecordBodies[K]>;

/**
 * What `sessionOpened` records: the session's execution identity and the inputs that made it (A2).
 * @example
 * ```ts
 * journal.sessionOpened({ sessionId, executionIdentity: identity.identity, identityInputs: identity.components, workspace });
 * ```
 */
export type SessionOpenedInput = InputOf<"session_opened">;
/**
 * What `turnPrepared` records: the fingerprints of what the model was shown this turn (M2, M3).
 * @example
 * ```ts
 * journal.turnPrepared({ sessionId, turnId, selectionFingerprint, catalogFingerprints: { acer: "sha256:…" } });
 * ```
 */
export type TurnPreparedInput = InputOf<"turn_prepared">;
/**
 * What `callRequested` records; `argsDigest`, when given, must be `argumentsDigest(args)`.
 * @example
 * ```ts
 * journal.callRequested({ sessionId, turnId, callId, alias, qualifiedName, args });
 * ```
 */
export type CallRequestedInput = Omit<InputOf<"call_requested">, "argsDigest"> & { readonly argsDigest?: string };
/**
 * What `approvalDecided` records: the decision, who made it, and the key it was decided under (A1).
 * @example
 * ```ts
 * journal.approvalDecided({ sessionId, callId, decision: "approved", by: "bypass", scope: "once", key });
 * ```
 */
export type ApprovalDecidedInput = InputOf<"approval_decided">;
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
 * What `callStarted` records: the call, and for an MCP provider that runs OAuth (M8) the scopes of the token the call runs under (never the token itself, E6).
 * @example
 * ```ts
 * await journal.callStarted({ sessionId, callId, authorizedScopes: ["notes:read"] });
 * ```
 */
export type CallStartedInput = InputOf<"call_started">;
/**
 * What `callProgress` records: one event, already bounded by the runtime (E2).
 * @example
 * ```ts
 * journal.callProgress({ sessionId, callId, event: { message: "indexing", fraction: 0.4 } });
 * ```
 */
export type CallProgressInput = InputOf<"call_progress">;
/**
 * What `callElicitationAsked` records: a provider's request for user input during the call (M9), its message redacted, a form's schema as a digest, a URL without
 * its query.
 * @example
 * ```ts
 * journal.callElicitationAsked({ sessionId, callId, elicitation: 1, provider: "notes", mode: "form", message: "Which folder?", schemaDigest });
 * ```
 */
export type CallElicitationAskedInput = InputOf<"call_elicitation_asked">;
/**
 * What `callElicitationAnswered` records: the answer the provider received and who gave it (M9); accepted values as a digest, unless the host opts in to keep
 * them.
 * @example
 * ```ts
 * journal.callElicitationAnswered({ sessionId, callId, elicitation: 1, action: "decline", by: "runtime", reason: "no elicitor" });
 * ```
 */
export type CallElicitationAnsweredInput = InputOf<"call_elicitation_answered">;
/**
 * What `callFinished` records: the one terminal record of a call (A3). Images as digests only (T4).
 * @example
 * ```ts
 * journal.callFinished({ sessionId, callId, outcome: "timed_out", code: "TOOL_TIMEOUT", message: "no answer in 75 s" });
 * ```
 */
export type CallFinishedInput = InputOf<"call_finished">;
/**
 * What `revoked` records: a tool's access revoked at turn end, cancellation or close (T5).
 * @example
 * ```ts
 * journal.revoked({ sessionId, tool: "example.web_search", reason: "cancel" });
 * ```
 */
export type RevokedInput = InputOf<"revoked">;
/**
 * What `turnFinished` records.
 * @example
 * ```ts
 * journal.turnFinished({ sessionId, turnId, completed: false, reason: "limit" });
 * ```
 */
export type TurnFinishedInput = InputOf<"turn_finished">;
