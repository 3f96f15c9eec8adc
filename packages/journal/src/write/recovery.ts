import { OpenWorkerError } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS } from "../errors.js";
import { type CallPhase, nextPhase, stepOf } from "../records/call-phase.js";
import { parseContent } from "../store/damage.js";
import type { JournalStore } from "../store/store.js";
import type { JournalWarning } from "../warnings.js";
import type { GroupCommit } from "./group-commit.js";
import type { LiveState, SessionState } from "./live-state.js";
import type { JournalWriter } from "./writer.js";

/**
 * A call a crash left without a terminal record, now marked `interrupted` (A3, E4): it is never replayed, and its effects, if any, are unknown.
 * @example
 * ```ts
 * for (const call of journal.recovered) console.warn(`${call.qualifiedName} was interrupted${call.started ? " after it started" : ""}`);
 * ```
 */
export interface InterruptedCall {
  readonly sessionId: string;
  readonly callId: string;
  readonly turnId: string;
  readonly qualifiedName: string;
  readonly alias: string;
  /** Whether its `call_started` was recorded: the tool may have run. */
  readonly started: boolean;
}

const MESSAGE = "the process ended before this call's terminal record was written; the call was not replayed and its effects, if any, are unknown";

/** Marks every open call `interrupted`: the head rows name them, and each one's records are read newest first only back to its request. */
export function recoverInterruptedCalls(
  store: JournalStore,
  state: LiveState,
  writer: JournalWriter,
  commit: GroupCommit,
): { recovered: InterruptedCall[]; warnings: JournalWarning[] } {
  const recovered: InterruptedCall[] = [];
  const warnings: JournalWarning[] = [];
  for (const sessionId of store.sessionsWithOpenCalls()) {
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
    const chain = readClaims(state, session, new Set(session.openCalls.keys()));
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
      const { phase, request } = found!;
      call.phase = phase as CallPhase;
      writer.interrupt(session, call, MESSAGE);
      recovered.push({ sessionId, callId: call.callId, ...request!, started: phase === "started" });
    }
  }
  commit.commitNow();
  return { recovered, warnings };
}

type Request = { turnId: string; qualifiedName: string; alias: string };
type Content = Record<string, unknown>;
interface ChainCall {
  phase?: CallPhase | undefined;
  ended?: string;
  request?: Request;
}
interface Claims {
  readonly calls: Map<string, ChainCall>;
  readonly complete: boolean;
  readonly damage?: string;
}

/** Each claimed call as its own records (read newest first, folded oldest first) leave it. */
function readClaims(state: LiveState, session: SessionState, callIds: ReadonlySet<string>): Claims {
  const records = new Map<string, Content[]>();
  let requests = 0;
  let complete = false;
  let damage: string | undefined;
  try {
    for (const data of state.recentRecords(session)) {
      const content = parseContent(data);
      if (typeof content === "string" || content.kind === "session_opened") {
        if (typeof content === "string") damage = content;
        else complete = true;
        break;
      }
      const callId = content.callId;
      if (typeof callId !== "string" || !callIds.has(callId) || stepOf(content.kind) === undefined) continue;
      const own = records.get(callId) ?? [];
      records.set(callId, own);
      if (own.at(-1)?.kind === "call_requested") continue;
      own.push(content);
      if (content.kind === "call_requested" && (requests += 1) === callIds.size) {
        complete = true;
        break;
      }
    }
  } catch (error) {
    // A frame the journal could not have written (see `FrameReader.newestFirst`).
    if (!OpenWorkerError.hasCode(error, JOURNAL_ERRORS.DAMAGED)) throw error;
    damage = error.message;
  }
  const calls = new Map<string, ChainCall>();
  for (const [callId, own] of records) {
    const call: ChainCall = {};
    for (const content of own.reverse()) {
      if (content.kind === "call_requested")
        call.request = { turnId: String(content.turnId), qualifiedName: String(content.qualifiedName), alias: String(content.alias) };
      const at = `seq ${String(content.seq)}`;
      const next = nextPhase(call.phase ?? (call.request === undefined ? "requested" : undefined), stepOf(content.kind)!, content.decision === "denied");
      if (next === "finished") call.ended ??= `its chain holds its terminal record (call_finished, ${String(content.outcome)}) at ${at}`;
      else if (next === "denied") call.ended ??= `its chain holds its denial at ${at}`;
      if (next !== undefined) call.phase = next;
    }
    calls.set(callId, call);
  }
  return damage === undefined ? { calls, complete } : { calls, complete, damage };
}

function contradictionOf(found: ChainCall | undefined, chain: Claims): string | undefined {
  if (found?.ended !== undefined) return found.ended;
  if (found?.request !== undefined) return undefined;
  if (chain.complete) return "its chain holds no call_requested record for it";
  return `its call_requested record could not be found: the chain breaks before it${chain.damage === undefined ? "" : ` (${chain.damage})`}`;
}
