import pg from "pg";
import { JOURNAL_POSTGRES_ERRORS, postgresError } from "./errors.js";

/** `postgres://user:secret@host/db` as messages show it: the password is never printed. */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== "") url.password = "***";
    return url.toString();
  } catch {
    // Not a URL (a libpq key/value string): drop any password=… pair.
    return connectionString.replace(/password\s*=\s*('[^']*'|\S+)/gi, "password=***");
  }
}

// bigint columns (refs, seq) hold values below 2^53: read them as numbers, on this package's clients only (no global type parser).
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/** The settings of every connection: the journal's schema first on the search path, int8 as numbers. */
export function clientConfig(connectionString: string, schema: string): pg.ClientConfig {
  return { connectionString, types, application_name: "openworker-journal", options: `-c search_path=${schema}` };
}

/** A connected client, or `JOURNAL_PG_CONNECT_FAILED` naming the server without its password. */
export async function connect(connectionString: string, schema: string): Promise<pg.Client> {
  const client = new pg.Client(clientConfig(connectionString, schema));
  try {
    await client.connect();
  } catch (cause) {
    await client.end().catch(() => undefined);
    throw postgresError(
      JOURNAL_POSTGRES_ERRORS.CONNECT_FAILED,
      `journal ${redactConnectionString(connectionString)}: cannot connect to PostgreSQL (${cause instanceof Error ? cause.message : String(cause)}); check the address, the credentials and that the database exists`,
      { journal: redactConnectionString(connectionString) },
      cause,
    );
  }
  // A dropped connection is seen by the next query; an idle client's error event must not crash the host.
  client.on("error", () => undefined);
  return client;
}
