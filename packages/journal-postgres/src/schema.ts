import type pg from "pg";
import { JOURNAL_POSTGRES_ERRORS, postgresError } from "./errors.js";

/** The version of the tables below, in `journal_meta`. */
export const POSTGRES_SCHEMA_VERSION = 1;

// The SQLite journal's tables (frames, live_sessions, sessions, approvals) plus the hosts' leases and each session's owner. A frame is keyed
// by its session and first seq: two hosts can never both extend one chain at the same place.
const TABLES = [
  "CREATE TABLE IF NOT EXISTS journal_meta (key text PRIMARY KEY, value text NOT NULL)",
  "CREATE SEQUENCE IF NOT EXISTS host_numbers",
  "CREATE TABLE IF NOT EXISTS hosts (host_id text PRIMARY KEY, host_no bigint NOT NULL UNIQUE, label text NOT NULL, started_at timestamptz NOT NULL DEFAULT now(), lease_until timestamptz NOT NULL)",
  `CREATE TABLE IF NOT EXISTS sessions (ref bigint PRIMARY KEY, session_id text NOT NULL UNIQUE, execution_identity text NOT NULL, workspace text NOT NULL,
     bundle_dir text, opened_at text NOT NULL, closed_at text, final_seq bigint, final_hash text, final_frame bigint, final_calls bigint, owner text)`,
  "CREATE INDEX IF NOT EXISTS sessions_owner ON sessions (owner) WHERE closed_at IS NULL",
  "CREATE TABLE IF NOT EXISTS live_sessions (ref bigint PRIMARY KEY, head_frame bigint NOT NULL, seq bigint NOT NULL, hash text NOT NULL, calls bigint NOT NULL, open_calls text NOT NULL)",
  "CREATE TABLE IF NOT EXISTS frames (session_ref bigint NOT NULL, first_seq bigint NOT NULL, id bigint NOT NULL, prev_frame bigint, body text NOT NULL, PRIMARY KEY (session_ref, first_seq))",
  `CREATE TABLE IF NOT EXISTS approvals (execution_identity text NOT NULL, qualified_name text NOT NULL, schema_fingerprint text NOT NULL, args_digest text NOT NULL,
     scope text NOT NULL, decided_by text NOT NULL, who text, decided_at text NOT NULL, PRIMARY KEY (execution_identity, qualified_name, schema_fingerprint, args_digest))`,
];

/** The PostgreSQL schema (namespace) name, quoted. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Creates the journal's schema and tables if missing (one host at a time, under an advisory lock), and refuses a newer version. */
export async function ensureSchema(client: pg.Client, schema: string, journal: string, create: boolean): Promise<void> {
  const quoted = quoteIdentifier(schema);
  await client.query("BEGIN");
  try {
    if (create) {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`openworker-journal:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    }
    if (create) for (const statement of TABLES) await client.query(statement);
    const table = await client.query<{ found: string | null }>("SELECT to_regclass('journal_meta')::text AS found");
    const found =
      table.rows[0]?.found == null ? undefined : await client.query<{ value: string }>("SELECT value FROM journal_meta WHERE key = 'schema_version'");
    const version = found?.rows[0] === undefined ? undefined : Number(found.rows[0].value);
    if (version === undefined && !create)
      throw postgresError(
        JOURNAL_POSTGRES_ERRORS.NOT_A_JOURNAL,
        `journal ${journal}: schema ${JSON.stringify(schema)} holds no journal; open it once as a writer, or name the schema a writer uses`,
        { schema },
      );
    if (version !== undefined && version > POSTGRES_SCHEMA_VERSION)
      throw postgresError(
        JOURNAL_POSTGRES_ERRORS.SCHEMA_TOO_NEW,
        `journal ${journal}: schema ${JSON.stringify(schema)} was written by a newer @openworker/journal-postgres (version ${version}, this one knows ${POSTGRES_SCHEMA_VERSION}); upgrade this host`,
        { version },
      );
    if (create && version === undefined)
      await client.query("INSERT INTO journal_meta (key, value) VALUES ('schema_version', $1)", [String(POSTGRES_SCHEMA_VERSION)]);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
