import type Database from "better-sqlite3";
import { JOURNAL_ERRORS, journalError } from "../errors.js";
import type { ApprovalDecider, ApprovalScope } from "../records/records.js";
import { optionalText, requireOneOf, requireText } from "../records/validate.js";

/**
 * What an approval is bound to (A2, M3): the session's execution identity, the tool and its schema fingerprint.
 *
 * @example
 * ```ts
 * const key: ApprovalKey = { executionIdentity, qualifiedName: "acer.battery", schemaFingerprint };
 * ```
 */
export interface ApprovalKey {
  readonly executionIdentity: string;
  readonly qualifiedName: string;
  readonly schemaFingerprint: string;
  /** `argumentsDigest(args)`; required to store or find a `once` approval. */
  readonly argsDigest?: string;
}
/**
 * A stored approval.
 *
 * @example
 * ```ts
 * const record = journal.findApproval(key); // { scope: "session", by: "person", decidedAt, … } | undefined
 * ```
 */
export interface ApprovalRecord {
  readonly executionIdentity: string;
  readonly qualifiedName: string;
  readonly schemaFingerprint: string;
  /** Present for `once` approvals. */
  readonly argsDigest?: string;
  readonly scope: ApprovalScope;
  readonly by: ApprovalDecider;
  readonly who?: string;
  /** ISO-8601 UTC. */
  readonly decidedAt: string;
}
/**
 * What `Journal.storeApproval` records besides the key.
 *
 * @example
 * ```ts
 * journal.storeApproval(key, { scope: "session", by: "person", who: "ana" });
 * ```
 */
export interface ApprovalGrant {
  readonly scope: ApprovalScope;
  readonly by: ApprovalDecider;
  readonly who?: string;
}

/**
 * Which remembered approvals `approvals()` lists and `revokeApprovals()` forgets: those of one execution identity, of one tool, or both.
 *
 * @example
 * ```ts
 * const filter: ApprovalFilter = { qualifiedName: "example.web_search" };
 * ```
 */
export interface ApprovalFilter {
  readonly executionIdentity?: string;
  readonly qualifiedName?: string;
}

interface FilterParameters {
  identity: string | null;
  tool: string | null;
}

function filterParameters(filter: ApprovalFilter): FilterParameters {
  return { identity: filterValue(filter.executionIdentity, "executionIdentity"), tool: filterValue(filter.qualifiedName, "qualifiedName") };
}

function filterValue(value: unknown, field: string): string | null {
  if (value === undefined) return null;
  if (typeof value !== "string" || value.length === 0)
    throw journalError(JOURNAL_ERRORS.INVALID_RECORD, `approval filter: ${field} must be a non-empty string when given`, { field });
  return value;
}

/** An `approvals` row as both stores keep it. */
export interface ApprovalRow {
  execution_identity: string;
  qualified_name: string;
  schema_fingerprint: string;
  args_digest: string;
  scope: ApprovalScope;
  decided_by: ApprovalDecider;
  who: string | null;
  decided_at: string;
}

// A session-scope approval is stored under the empty digest: one primary-key lookup finds it.
export const ANY_ARGUMENTS = "";

/**
 * The approval store: one row per (identity, tool, schema fingerprint, argument digest), looked up through the primary key with prepared statements (no scan on the hot
 * path).
 */
export class ApprovalStore {
  private readonly sql;

  constructor(db: Database.Database) {
    const where = "execution_identity = ? AND qualified_name = ? AND schema_fingerprint = ? AND args_digest = ?";
    const matching = "(@identity IS NULL OR execution_identity = @identity) AND (@tool IS NULL OR qualified_name = @tool)";
    this.sql = {
      find: db.prepare<[string, string, string, string], ApprovalRow>(`SELECT * FROM approvals WHERE ${where}`),
      list: db.prepare<[FilterParameters], ApprovalRow>(`SELECT * FROM approvals WHERE ${matching} ORDER BY decided_at, qualified_name`),
      revoke: db.prepare<[FilterParameters]>(`DELETE FROM approvals WHERE ${matching}`),
      store: db.prepare(
        "INSERT OR REPLACE INTO approvals (execution_identity, qualified_name, schema_fingerprint, args_digest, scope, decided_by, who, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      remove: db.prepare(`DELETE FROM approvals WHERE ${where}`),
    };
  }
  /** A session-scope approval for the key, else a once-only approval for its exact arguments. */
  find(key: ApprovalKey): ApprovalRecord | undefined {
    const row = this.lookup(key);
    return row === undefined ? undefined : toRecord(row);
  }
  /** Like {@link find}, but a `once` approval found is deleted in the same step: it serves one call. */
  consume(key: ApprovalKey): ApprovalRecord | undefined {
    const row = this.lookup(key);
    if (row === undefined) return undefined;
    if (row.scope === "once") this.sql.remove.run(row.execution_identity, row.qualified_name, row.schema_fingerprint, row.args_digest);
    return toRecord(row);
  }
  store(key: ApprovalKey, grant: ApprovalGrant): void {
    const site = `storeApproval of tool ${JSON.stringify(key.qualifiedName)}`;
    const checked = checkKey(site, key);
    const scope = requireOneOf(site, "scope", grant.scope, ["once", "session"] as const);
    const by = requireOneOf(site, "by", grant.by, ["person", "policy", "bypass"] as const);
    const who = optionalText(site, "who", grant.who);
    if (scope === "once" && key.argsDigest === undefined)
      throw journalError(JOURNAL_ERRORS.INVALID_RECORD, `${site}: a "once" approval needs key.argsDigest (argumentsDigest of the call's arguments)`, {
        field: "argsDigest",
      });
    const digest = scope === "once" ? requireText(site, "argsDigest", key.argsDigest) : ANY_ARGUMENTS;
    this.sql.store.run(checked.executionIdentity, checked.qualifiedName, checked.schemaFingerprint, digest, scope, by, who ?? null, new Date().toISOString());
  }
  /** The remembered approvals, oldest first, of one identity and/or tool (every one without a filter). */
  list(filter: ApprovalFilter): ApprovalRecord[] {
    return this.sql.list.all(filterParameters(filter)).map(toRecord);
  }
  /** Forgets the remembered approvals the filter matches; returns how many. */
  revoke(filter: ApprovalFilter): number {
    return this.sql.revoke.run(filterParameters(filter)).changes;
  }
  private lookup(key: ApprovalKey): ApprovalRow | undefined {
    const { executionIdentity, qualifiedName, schemaFingerprint } = checkKey("findApproval", key);
    const session = this.sql.find.get(executionIdentity, qualifiedName, schemaFingerprint, ANY_ARGUMENTS);
    if (session !== undefined || key.argsDigest === undefined || key.argsDigest === ANY_ARGUMENTS) return session;
    return this.sql.find.get(executionIdentity, qualifiedName, schemaFingerprint, key.argsDigest);
  }
}

function checkKey(site: string, key: ApprovalKey): ApprovalKey {
  return {
    executionIdentity: requireText(site, "executionIdentity", key.executionIdentity),
    qualifiedName: requireText(site, "qualifiedName", key.qualifiedName),
    schemaFingerprint: requireText(site, "schemaFingerprint", key.schemaFingerprint),
  };
}

/** A row as the `ApprovalRecord` the journal hands out. */
export function toRecord(row: ApprovalRow): ApprovalRecord {
  return {
    executionIdentity: row.execution_identity,
    qualifiedName: row.qualified_name,
    schemaFingerprint: row.schema_fingerprint,
    ...(row.args_digest === ANY_ARGUMENTS ? {} : { argsDigest: row.args_digest }),
    scope: row.scope,
    by: row.decided_by,
    ...(row.who === null ? {} : { who: row.who }),
    decidedAt: row.decided_at,
  };
}
