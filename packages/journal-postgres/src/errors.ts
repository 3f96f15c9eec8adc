import { OpenWorkerError } from "@openworker/tools-sdk";

/**
 * The error codes this package adds to the journal's own (`JOURNAL_ERRORS`, which it also throws: `JOURNAL_WRITE_FAILED`,
 * `JOURNAL_CLOSED`, `JOURNAL_READ_ONLY` and the record checks).
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error, JOURNAL_POSTGRES_ERRORS.LEASE_LOST)) process.exit(1);
 * ```
 */
export const JOURNAL_POSTGRES_ERRORS = Object.freeze({
  /** The server could not be reached or refused the connection (address, credentials, database name). */
  CONNECT_FAILED: "JOURNAL_PG_CONNECT_FAILED",
  /** The database holds a journal schema written by a newer version of this package. */
  SCHEMA_TOO_NEW: "JOURNAL_PG_SCHEMA_TOO_NEW",
  /** A reader met a database (schema) without a journal in it. */
  NOT_A_JOURNAL: "JOURNAL_PG_NOT_A_JOURNAL",
  /** This host's lease expired (it was paused or cut off longer than `leaseMs`) and another host may have taken its sessions over. */
  LEASE_LOST: "JOURNAL_PG_LEASE_LOST",
  /** An option has the wrong type or value. */
  INVALID_OPTION: "JOURNAL_PG_INVALID_OPTION",
});

/** One of {@link JOURNAL_POSTGRES_ERRORS}. */
export type JournalPostgresErrorCode = (typeof JOURNAL_POSTGRES_ERRORS)[keyof typeof JOURNAL_POSTGRES_ERRORS];

export function postgresError(
  code: JournalPostgresErrorCode,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
  cause?: unknown,
): OpenWorkerError {
  return new OpenWorkerError(code, message, cause === undefined ? { details } : { details, cause });
}
