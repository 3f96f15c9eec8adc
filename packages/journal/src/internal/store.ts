// Anything exported here is the store seam of @openworker/journal: for the workspace's store adapters
// (@openworker/journal-postgres), and it may change without changing the journal's contract.
export { journalError } from "../errors.js";
export { summarizeCalls, toSession, type SessionRow } from "../read/reader.js";
export { parseOpenCalls } from "../records/call-phase.js";
export { GENESIS_HASH } from "../records/chain.js";
export { ANY_ARGUMENTS, toRecord as approvalRecordOf, type ApprovalRow } from "../store/approvals.js";
export { readContent } from "../store/damage.js";
export { parseFrameLine, type ChainHead } from "../store/frames.js";
export type { GroupOp, GroupWrites, JournalStore, StoredSession } from "../store/store.js";
export { ChainWalk, type VerifiedSessionRow } from "../verify/verify-chain.js";
export { JournalEngine, type RecordWriter } from "../write/engine.js";
