import type { Journal } from "./journal.js";
import type { ApprovalGrant, ApprovalKey, ApprovalRecord } from "./store/approvals.js";

/**
 * What a runtime writes its sessions through: the record methods of {@link Journal} (every one, so a new record kind needs no change
 * here), `flush`, what opening recovered, and remembered approvals, which another store may answer asynchronously (a table shared by a
 * fleet of hosts). The SQLite `Journal` is one; `PostgresJournal` of `@openworker/journal-postgres` is another.
 * @example
 * ```ts
 * const journal: SessionJournal = Journal.open({ path: ".openworker/journal.db" });
 * const approval = await journal.findApproval(key);
 * ```
 */
export type SessionJournal = Omit<
  Journal,
  | "findApproval"
  | "consumeApproval"
  | "storeApproval"
  | "approvals"
  | "revokeApprovals"
  | "sessions"
  | "session"
  | "calls"
  | "timeline"
  | "records"
  | "exportSession"
  | "verify"
  | "close"
  | "path"
  | "durability"
  | "readonly"
> & {
  findApproval(key: ApprovalKey): ApprovalRecord | undefined | Promise<ApprovalRecord | undefined>;
  storeApproval(key: ApprovalKey, record: ApprovalGrant): void | Promise<void>;
  /** Commits what is queued and lets the store go; idempotent. */
  close(): void | Promise<void>;
};
