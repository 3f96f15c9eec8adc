/**
 * What a warning is about: `"open-call-contradicted"` (a head row lists a call as open that its chain ended or never
 * requested: the claim was dropped, nothing appended), `"session-damaged"` (a head row cannot be read: its calls were not
 * marked interrupted, and writes to the session throw `JOURNAL_DAMAGED`), `"tail-records-lost"` (records of a legacy
 * tail log that cannot be replayed: they are lost).
 * @example
 * ```ts
 * const kind: JournalWarningKind = "tail-records-lost";
 * ```
 */
export type JournalWarningKind = "open-call-contradicted" | "session-damaged" | "tail-records-lost";

/**
 * Something a writer found while opening the journal (replaying a legacy tail log, recovering) that contradicts the file's own records or cannot be put
 * right; the journal opened anyway.
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
