import type Database from "better-sqlite3";
import type { GroupCommit } from "./group-commit.js";
import type { LiveState, SessionState } from "./live-state.js";
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
 * Finds every open call (requested, not denied, no terminal record) in the head rows of
 * the sessions still open, writes `interrupted` for each and commits, before the journal
 * accepts new writes. The cost is proportional to the sessions left open, not to the
 * size of the file. Nothing is replayed.
 */
export function recoverInterruptedCalls(
  db: Database.Database,
  state: LiveState,
  writer: JournalWriter,
  commit: GroupCommit,
): InterruptedCall[] {
  const sessions = db
    .prepare<[], { session_id: string }>(
      `SELECT s.session_id FROM live_sessions l JOIN sessions s ON s.ref = l.ref
        WHERE l.open_calls <> '{}' ORDER BY l.ref`,
    )
    .all();
  const recovered: InterruptedCall[] = [];
  for (const { session_id: sessionId } of sessions) {
    const session = state.session(sessionId);
    if (session === undefined || session.closed) continue;
    const open = [...session.openCalls.values()];
    const requests = requestsOf(state, session, new Set(open.map((call) => call.callId)));
    for (const call of open) {
      const started = call.phase === "started";
      writer.interrupt(session, call, MESSAGE);
      const request = requests.get(call.callId);
      recovered.push({
        sessionId,
        callId: call.callId,
        turnId: request?.turnId ?? "",
        qualifiedName: request?.qualifiedName ?? "",
        alias: request?.alias ?? "",
        started,
      });
    }
  }
  commit.commitNow();
  return recovered;
}

type Request = { turnId: string; qualifiedName: string; alias: string };

/** The `call_requested` records of the given calls, read back from the session's newest frames. */
function requestsOf(state: LiveState, session: SessionState, callIds: ReadonlySet<string>): Map<string, Request> {
  const found = new Map<string, Request>();
  for (const data of state.recentRecords(session)) {
    const content = JSON.parse(data) as { kind: string; callId?: string } & Request;
    if (content.kind === "call_requested" && content.callId !== undefined && callIds.has(content.callId)) {
      found.set(content.callId, { turnId: content.turnId, qualifiedName: content.qualifiedName, alias: content.alias });
      if (found.size === callIds.size) break;
    }
  }
  return found;
}
