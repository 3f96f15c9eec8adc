import type pg from "pg";
import Client from "pg/lib/client.js";
import TypeOverrides from "pg/lib/type-overrides.js";
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

/** A connected client: the journal's schema first on the search path, int8 as numbers. `JOURNAL_PG_CONNECT_FAILED` names the server without its password. */
export async function connect(connectionString: string, schema: string): Promise<pg.Client> {
  const types = new TypeOverrides();
  types.setTypeParser(INT8, Number);
  const client = new Client({ connectionString, types, application_name: "openworker-journal", options: `-c search_path=${schema}` });
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

/** A connection for reads and approvals: one statement or snapshot at a time, in the order asked. */
export class ReadConnection {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly client: pg.Client) {}

  query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<T>> {
    return this.serial(() => this.client.query<T>(text, values));
  }
  /** Runs `read` in one repeatable-read, read-only transaction: every statement sees the database as it stood when it began. */
  snapshot<T>(read: (client: pg.Client) => Promise<T>): Promise<T> {
    return this.serial(async () => {
      await this.client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      try {
        const result = await read(this.client);
        await this.client.query("COMMIT");
        return result;
      } catch (error) {
        await this.client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    });
  }
  async end(): Promise<void> {
    await this.tail;
    await this.client.end();
  }
  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
