// Anything exported here is public API of @openworker/journal.
export { JOURNAL_ERRORS, type JournalErrorCode } from "./errors.js";
export { argumentsDigest, computeExecutionIdentity, type ExecutionIdentity, type ExecutionIdentityInputs, type SelectedTool } from "./identity.js";
export { hostExecutableDigest } from "./host.js";
export type { ApprovalFilter, ApprovalGrant, ApprovalKey, ApprovalRecord } from "./store/approvals.js";
export type {
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
} from "./records/inputs.js";
export { Journal, type Durability, type JournalOptions } from "./journal.js";
export type { SessionJournal } from "./session-journal.js";
export type { CallSummary, ElicitationSummary, SessionSummary } from "./read/reader.js";
export {
  CALL_OUTCOMES,
  RECORD_KINDS,
  type ApprovalDecider,
  type ApprovalScope,
  type CallOutcome,
  type ElicitationAction,
  type ElicitationAnswerer,
  type ElicitationMode,
  type JournalRecord,
  type RecordBodies,
  type RecordContent,
  type RecordEnvelope,
  type RecordKind,
} from "./records/records.js";
export type { InterruptedCall } from "./write/recovery.js";
export { SCHEMA_VERSION } from "./store/schema.js";
export type { ChainBreak, VerifyReport } from "./verify/verify.js";
export type { JournalWarning, JournalWarningKind } from "./warnings.js";
