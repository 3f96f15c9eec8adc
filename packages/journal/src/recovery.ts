import type Database from "better-sqlite3";
import type { GroupCommit } from "./group-commit.js";
import type { LiveState } from "./live-state.js";
import type { JournalWriter } from "./writer.js";

/**
 * A call a crash left without a terminal record, now marked `interrupted` (A3).
 *
 * @example
 * ```ts
 * for (const call of journal.recovered) if (call.started) console.warn(`${call.qualifiedName} may have had effects`);
 * ```
 */
export interface InterruptedCall {
  readonly sessionId: string;
  readonly callId: string;
  readonly turnId: string;
  readonly qualifiedName: string;
  readonly alias: string;
  /**
   * True when the call had started: its effects may have happened, and it was not
   * replayed (E4). False for a call still waiting for approval or start.
   */
  readonly started: boolean;
}

const MESSAGE =
  "the process ended before this call's terminal record was written; the call was not replayed and its effects, if any, are unknown";

/**
 * Finds every open call (requested, not denied, no terminal record) through the partial
 * index `calls_open`, writes `interrupted` for each and commits, before the journal
 * accepts new writes. The cost is proportional to the calls left open, not to the size
 * of the file. Nothing is replayed.
 */
export function recoverInterruptedCalls(
  db: Database.Database,
  state: LiveState,
  writer: JournalWriter,
  commit: GroupCommit,
): InterruptedCall[] {
  const open = db
    .prepare<[], { call_id: string; session_id: string; turn_id: string; qualified_name: string; alias: string }>(
      `SELECT c.call_id, s.session_id, c.turn_id, c.qualified_name, c.alias
         FROM calls c JOIN sessions s ON s.ref = c.session_ref
        WHERE c.open = 1 ORDER BY c.session_ref, c.requested_seq`,
    )
    .all();
  const recovered: InterruptedCall[] = [];
  for (const row of open) {
    const call = state.call(row.call_id);
    if (call === undefined) continue;
    const started = call.phase === "started";
    writer.interrupt(call, MESSAGE);
    recovered.push({
      sessionId: row.session_id,
      callId: row.call_id,
      turnId: row.turn_id,
      qualifiedName: row.qualified_name,
      alias: row.alias,
      started,
    });
  }
  commit.commitNow();
  return recovered;
}
