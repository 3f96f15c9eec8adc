import { OpenWorkerError } from "@openworker/tools-sdk";
import type Database from "better-sqlite3";
import { parseContent } from "./damage.js";
import { JOURNAL_ERRORS } from "./errors.js";
import type { GroupCommit } from "./group-commit.js";
import type { LiveState, SessionState } from "./live-state.js";
import type { JournalWarning } from "./warnings.js";
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
 * the sessions still open, confirms each against the session's chain, writes
 * `interrupted` for each confirmed one and commits, before the journal accepts new
 * writes. The cost is proportional to the sessions left open, not to the size of the
 * file: the chain is read newest first, only until every claimed call's request is found.
 * Nothing is replayed.
 *
 * The head row is an index, not the record: a claim the chain contradicts (the call has a
 * terminal record or a denial, or was never requested) is dropped from the writer's state
 * and reported as a warning, and nothing is appended for it, so recovery never writes a
 * second terminal record. A confirmed call takes its phase from the chain (a start the
 * row does not show still makes it `started`).
 */
export function recoverInterruptedCalls(
  db: Database.Database,
  state: LiveState,
  writer: JournalWriter,
  commit: GroupCommit,
): { recovered: InterruptedCall[]; warnings: JournalWarning[] } {
  const sessions = db
    .prepare<[], { session_id: string }>(
      `SELECT s.session_id FROM live_sessions l JOIN sessions s ON s.ref = l.ref
        WHERE l.open_calls <> '{}' ORDER BY l.ref`,
    )
    .all();
  const recovered: InterruptedCall[] = [];
  const warnings: JournalWarning[] = [];
  for (const { session_id: sessionId } of sessions) {
    let session: SessionState | undefined;
    try {
      session = state.session(sessionId);
    } catch (error) {
      if (!OpenWorkerError.hasCode(error, JOURNAL_ERRORS.DAMAGED)) throw error;
      warnings.push({
        kind: "session-damaged",
        sessionId,
        message: `${error.message}. Its calls were not marked interrupted, and every write to the session throws JOURNAL_DAMAGED`,
      });
      continue;
    }
    if (session === undefined || session.closed) continue;
    const claims = [...session.openCalls.values()];
    const chain = readClaims(state, session, new Set(claims.map((call) => call.callId)));
    for (const call of claims) {
      const found = chain.calls.get(call.callId);
      const contradiction = contradictionOf(found, chain);
      if (contradiction !== undefined) {
        session.openCalls.delete(call.callId);
        warnings.push({
          kind: "open-call-contradicted",
          sessionId,
          callId: call.callId,
          message: `session ${JSON.stringify(sessionId)}: its head row lists call ${JSON.stringify(call.callId)} as open (${call.phase}), but ${contradiction}; the claim was dropped and nothing was appended for the call (run verify())`,
        });
        continue;
      }
      call.phase = found!.phase;
      writer.interrupt(session, call, MESSAGE);
      const request = found!.request!;
      recovered.push({ sessionId, callId: call.callId, ...request, started: found!.phase === "started" });
    }
  }
  commit.commitNow();
  return { recovered, warnings };
}

type Request = { turnId: string; qualifiedName: string; alias: string };

/** What a session's chain says about one claimed call, read newest first. */
interface ChainCall {
  phase: "requested" | "approved" | "started";
  /** Why the call is not open: its terminal record or its denial, with the `seq`. */
  ended?: string;
  request?: Request;
}

interface Claims {
  readonly calls: Map<string, ChainCall>;
  /** The walk found every claimed call's request, or reached the session's first record: a call it did not find was never requested. */
  readonly complete: boolean;
  /** Why the walk stopped early, if it read something the journal could not have written. */
  readonly damage?: string;
}

/**
 * Reads the session's committed records newest first until every claimed call's
 * `call_requested` is found (the calls a crash left open are among the newest), noting
 * for each claimed call its terminal record or denial and how far it got.
 */
function readClaims(state: LiveState, session: SessionState, callIds: ReadonlySet<string>): Claims {
  const calls = new Map<string, ChainCall>();
  let requests = 0;
  try {
    for (const data of state.recentRecords(session)) {
      const content = parseContent(data);
      if (typeof content === "string") return { calls, complete: false, damage: content };
      if (content.kind === "session_opened") return { calls, complete: true };
      const callId = content.callId;
      if (typeof callId !== "string" || !callIds.has(callId)) continue;
      let call = calls.get(callId);
      if (call === undefined) calls.set(callId, (call = { phase: "requested" }));
      if (call.request !== undefined) continue;
      const at = `seq ${String(content.seq)}`;
      if (content.kind === "call_finished") call.ended ??= `its chain holds its terminal record (call_finished, ${String(content.outcome)}) at ${at}`;
      else if (content.kind === "call_started") call.phase = "started";
      else if (content.kind === "approval_decided") {
        if (content.decision === "denied") call.ended ??= `its chain holds its denial at ${at}`;
        else if (call.phase === "requested") call.phase = "approved";
      } else if (content.kind === "call_requested") {
        call.request = { turnId: String(content.turnId), qualifiedName: String(content.qualifiedName), alias: String(content.alias) };
        requests += 1;
        if (requests === callIds.size) return { calls, complete: true };
      }
    }
  } catch (error) {
    // A frame the journal could not have written (see `FrameReader.newestFirst`).
    if (!OpenWorkerError.hasCode(error, JOURNAL_ERRORS.DAMAGED)) throw error;
    return { calls, complete: false, damage: error.message };
  }
  return { calls, complete: false };
}

/** Why the chain contradicts a claimed open call, or `undefined` when it confirms it. */
function contradictionOf(found: ChainCall | undefined, chain: Claims): string | undefined {
  if (found?.ended !== undefined) return found.ended;
  if (found?.request !== undefined) return undefined;
  if (chain.complete) return "its chain holds no call_requested record for it";
  return `its call_requested record could not be found: the chain breaks before it${chain.damage === undefined ? "" : ` (${chain.damage})`}`;
}
