// Anything exported here is public API of @openworker/journal.
export { JOURNAL_ERRORS, type JournalErrorCode } from "./errors.js";
export {
  argumentsDigest,
  computeExecutionIdentity,
  type ExecutionIdentity,
  type ExecutionIdentityInputs,
  type SelectedTool,
} from "./identity.js";
export { hostExecutableDigest } from "./host.js";
export type { ApprovalFilter, ApprovalGrant, ApprovalKey, ApprovalRecord } from "./approvals.js";
export type {
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
export type { CommitThreadMode } from "./group-commit.js";
export { Journal, type Durability, type JournalOptions } from "./journal.js";
export type { CallSummary, SessionSummary } from "./reader.js";
export {
  CALL_OUTCOMES,
  RECORD_KINDS,
  type ApprovalDecider,
  type ApprovalScope,
  type CallOutcome,
  type JournalRecord,
  type RecordBodies,
  type RecordContent,
  type RecordEnvelope,
  type RecordKind,
} from "./records.js";
export type { InterruptedCall } from "./recovery.js";
export { SCHEMA_VERSION } from "./schema.js";
export type { ChainBreak, VerifyReport } from "./verify.js";
export type { JournalWarning, JournalWarningKind } from "./warnings.js";
