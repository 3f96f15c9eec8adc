import { OpenWorkerError } from "@openworker/tools-sdk";

/**
 * Every stable error code this package throws.
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error, JOURNAL_ERRORS.TERMINAL_EXISTS)) return;
 * ```
 */
export const JOURNAL_ERRORS = Object.freeze({
  /** The file could not be opened as a SQLite database (missing folder rights, not SQLite, locked), or a writer may not write it. */
  OPEN_FAILED: "JOURNAL_OPEN_FAILED",
  /** The path exists but is not a regular file (a directory, a device such as `/dev/null`, a FIFO). */
  NOT_A_FILE: "JOURNAL_NOT_A_FILE",
  /**
   * A reader cannot create the `-shm` (or `-wal`) file SQLite needs beside a WAL-mode database because the journal's folder is not writable: make it
   * writable, or copy the file (with its `-wal`, if any) to a writable folder.
   */
  FOLDER_READ_ONLY: "JOURNAL_FOLDER_READ_ONLY",
  /** A reader met an empty file (0 bytes, or a SQLite database without tables): not a journal until a writer opens it. */
  EMPTY: "JOURNAL_EMPTY",
  /** The SQLite file holds tables but is not a journal. */
  NOT_A_JOURNAL: "JOURNAL_NOT_A_JOURNAL",
  /** The file was written by a newer version of this package. */
  SCHEMA_TOO_NEW: "JOURNAL_SCHEMA_TOO_NEW",
  /** A read-only open met an older schema that only a writer may migrate. */
  NEEDS_MIGRATION: "JOURNAL_NEEDS_MIGRATION",
  /** The journal was closed. */
  CLOSED: "JOURNAL_CLOSED",
  /** A write on a journal opened with `readonly: true`. */
  READ_ONLY: "JOURNAL_READ_ONLY",
  /** A group commit failed; the journal refuses further writes. */
  WRITE_FAILED: "JOURNAL_WRITE_FAILED",
  /** A record field has the wrong type or an unknown value. */
  INVALID_RECORD: "JOURNAL_INVALID_RECORD",
  /** An image was handed over as something other than a digest (T4). */
  IMAGE_NOT_DIGEST: "JOURNAL_IMAGE_NOT_DIGEST",
  UNKNOWN_SESSION: "JOURNAL_UNKNOWN_SESSION",
  SESSION_EXISTS: "JOURNAL_SESSION_EXISTS",
  SESSION_CLOSED: "JOURNAL_SESSION_CLOSED",
  UNKNOWN_CALL: "JOURNAL_UNKNOWN_CALL",
  /** A call id already used in the same session (call ids are unique within their session). */
  CALL_EXISTS: "JOURNAL_CALL_EXISTS",
  /** Another writer (a live process) holds the journal's writer lock. */
  LOCKED: "JOURNAL_LOCKED",
  /** The file lacks what the journal itself always writes (e.g. a live session's head row): it was altered. */
  DAMAGED: "JOURNAL_DAMAGED",
  /** A second approval decision for one call. */
  DECISION_EXISTS: "JOURNAL_DECISION_EXISTS",
  /** `callStarted` before an `approved` decision (bypass still records one, A1). */
  CALL_NOT_APPROVED: "JOURNAL_CALL_NOT_APPROVED",
  /** A record for a call that was denied. */
  CALL_DENIED: "JOURNAL_CALL_DENIED",
  /** Progress for a call that has not started. */
  CALL_NOT_STARTED: "JOURNAL_CALL_NOT_STARTED",
  CALL_ALREADY_STARTED: "JOURNAL_CALL_ALREADY_STARTED",
  /** `sessionClosed` while calls of the session have no terminal record. */
  CALLS_OPEN: "JOURNAL_CALLS_OPEN",
  /** A second terminal record, or any record after the terminal one (A3). */
  TERMINAL_EXISTS: "JOURNAL_TERMINAL_EXISTS",
  /** Execution-identity inputs that contradict each other. */
  IDENTITY_INPUT_INVALID: "IDENTITY_INPUT_INVALID",
  /** The host entry file could not be read for its digest. */
  HOST_ENTRY_UNREADABLE: "HOST_ENTRY_UNREADABLE",
} as const);

/**
 * One of the codes in {@link JOURNAL_ERRORS}.
 * @example
 * ```ts
 * const code: JournalErrorCode = JOURNAL_ERRORS.CALLS_OPEN;
 * ```
 */
export type JournalErrorCode = (typeof JOURNAL_ERRORS)[keyof typeof JOURNAL_ERRORS];

export function journalError(code: JournalErrorCode, message: string, details: Readonly<Record<string, unknown>> = {}, cause?: unknown): OpenWorkerError {
  return new OpenWorkerError(code, message, cause === undefined ? { details } : { details, cause });
}
