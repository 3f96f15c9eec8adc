/**
 * What a warning is about:
 * - `"open-call-contradicted"`: a session's head row listed a call as open that its chain
 *   ended (a terminal record or a denial) or never requested; the claim was dropped and
 *   nothing was appended for it (a second terminal record is never written).
 * - `"session-damaged"`: a session's head row could not be read (its open calls are not
 *   the JSON the journal writes): its calls were not marked interrupted, and every write
 *   to the session throws `JOURNAL_DAMAGED`.
 * - `"tail-records-lost"`: the tail log held records of a session that could not be
 *   replayed because records before them are in neither the database nor the tail log
 *   (a lost or damaged `-wal`, or a damaged tail log): those records are lost.
 *
 * @example
 * ```ts
 * const kind: JournalWarningKind = "tail-records-lost";
 * ```
 */
export type JournalWarningKind = "open-call-contradicted" | "session-damaged" | "tail-records-lost";

/**
 * Something a writer found while opening the journal (replaying its tail log, recovering) that contradicts the file's own records or cannot be put
 * right; the journal opened anyway.
 *
 * @example
 * ```ts
 * for (const warning of journal.warnings) console.warn(`journal: ${warning.message}`);
 * ```
 */
export interface JournalWarning {
  readonly kind: JournalWarningKind;
  readonly sessionId: string;
  readonly callId?: string;
  /** What was found and what the journal did, naming the session (and call). */
  readonly message: string;
}
