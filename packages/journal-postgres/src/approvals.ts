import { JOURNAL_ERRORS, type ApprovalFilter, type ApprovalGrant, type ApprovalKey, type ApprovalRecord } from "@openworker/journal";
import { ANY_ARGUMENTS, approvalRecordOf, type ApprovalRow, journalError } from "@openworker/journal/internal/store";
import type { ReadConnection } from "./connection.js";

const KEY = "execution_identity = $1 AND qualified_name = $2 AND schema_fingerprint = $3";
const MATCHING = "($1::text IS NULL OR execution_identity = $1) AND ($2::text IS NULL OR qualified_name = $2)";

/**
 * The approvals every host of the fleet shares, under the SQLite journal's identity rules (A2, M3): keyed by execution identity, tool,
 * schema fingerprint and (for `once`) argument digest. A `once` approval is used up by one `DELETE … RETURNING`, so two hosts can never
 * both consume it.
 */
export class SharedApprovals {
  constructor(private readonly connection: ReadConnection) {}

  async find(key: ApprovalKey): Promise<ApprovalRecord | undefined> {
    const checked = checkKey("findApproval", key);
    const digests = key.argsDigest === undefined ? [ANY_ARGUMENTS] : [ANY_ARGUMENTS, key.argsDigest];
    const found = await this.connection.query<ApprovalRow>(
      `SELECT * FROM approvals WHERE ${KEY} AND args_digest = ANY($4::text[]) ORDER BY args_digest = '' DESC LIMIT 1`,
      [...checked, digests],
    );
    return found.rows[0] === undefined ? undefined : approvalRecordOf(found.rows[0]);
  }
  async consume(key: ApprovalKey): Promise<ApprovalRecord | undefined> {
    const checked = checkKey("consumeApproval", key);
    const session = await this.find({ executionIdentity: checked[0], qualifiedName: checked[1], schemaFingerprint: checked[2] });
    if (session !== undefined || key.argsDigest === undefined || key.argsDigest === ANY_ARGUMENTS) return session;
    const used = await this.connection.query<ApprovalRow>(`DELETE FROM approvals WHERE ${KEY} AND args_digest = $4 AND scope = 'once' RETURNING *`, [
      ...checked,
      key.argsDigest,
    ]);
    return used.rows[0] === undefined ? undefined : approvalRecordOf(used.rows[0]);
  }
  async store(key: ApprovalKey, grant: ApprovalGrant): Promise<void> {
    const site = `storeApproval of tool ${JSON.stringify(key.qualifiedName)}`;
    const checked = checkKey(site, key);
    const scope = oneOf(site, "scope", grant.scope, ["once", "session"]);
    const by = oneOf(site, "by", grant.by, ["person", "policy", "bypass"]);
    if (grant.who !== undefined) text(site, "who", grant.who);
    if (scope === "once" && key.argsDigest === undefined)
      throw journalError(JOURNAL_ERRORS.INVALID_RECORD, `${site}: a "once" approval needs key.argsDigest (argumentsDigest of the call's arguments)`, {
        field: "argsDigest",
      });
    const digest = scope === "once" ? text(site, "argsDigest", key.argsDigest) : ANY_ARGUMENTS;
    await this.connection.query(
      `INSERT INTO approvals (execution_identity, qualified_name, schema_fingerprint, args_digest, scope, decided_by, who, decided_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (execution_identity, qualified_name, schema_fingerprint, args_digest)
         DO UPDATE SET scope = excluded.scope, decided_by = excluded.decided_by, who = excluded.who, decided_at = excluded.decided_at`,
      [...checked, digest, scope, by, grant.who ?? null, new Date().toISOString()],
    );
  }
  async list(filter: ApprovalFilter): Promise<ApprovalRecord[]> {
    const found = await this.connection.query<ApprovalRow>(
      `SELECT * FROM approvals WHERE ${MATCHING} ORDER BY decided_at, qualified_name`,
      filterValues(filter),
    );
    return found.rows.map(approvalRecordOf);
  }
  async revoke(filter: ApprovalFilter): Promise<number> {
    const removed = await this.connection.query(`DELETE FROM approvals WHERE ${MATCHING}`, filterValues(filter));
    return removed.rowCount ?? 0;
  }
}

function text(site: string, field: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0)
    throw journalError(JOURNAL_ERRORS.INVALID_RECORD, `${site}: ${field} must be a non-empty string`, { field });
  return value;
}

function oneOf<T extends string>(site: string, field: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T))
    throw journalError(JOURNAL_ERRORS.INVALID_RECORD, `${site}: ${field} must be one of ${allowed.map((item) => JSON.stringify(item)).join(", ")}`, { field });
  return value as T;
}

function checkKey(site: string, key: ApprovalKey): [string, string, string] {
  return [
    text(site, "executionIdentity", key.executionIdentity),
    text(site, "qualifiedName", key.qualifiedName),
    text(site, "schemaFingerprint", key.schemaFingerprint),
  ];
}

function filterValues(filter: ApprovalFilter): (string | null)[] {
  const value = (field: "executionIdentity" | "qualifiedName") => (filter[field] === undefined ? null : text("approval filter", field, filter[field]));
  return [value("executionIdentity"), value("qualifiedName")];
}
