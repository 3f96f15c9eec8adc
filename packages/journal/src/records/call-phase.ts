import { describeCell } from "../store/damage.js";
import { jsonString } from "./encode.js";
import { type ApprovalDecider, RECORD_KINDS, type RecordKind } from "./records.js";

/** Where a call stands in its state machine (A3). */
export type CallPhase = "requested" | "approved" | "denied" | "started" | "finished";

/** A record kind that moves a call along: every kind of a call's records. */
export type CallStep = Extract<RecordKind, `call_${string}` | "approval_decided">;

const STEPS: ReadonlySet<unknown> = new Set(RECORD_KINDS.filter((kind) => kind.startsWith("call_") || kind === "approval_decided"));

/** How an open call is kept in its session's head row: `[phase, decidedBy?]`. */
export type OpenCallEntry = readonly [phase: CallPhase, decidedBy?: ApprovalDecider];

const OPEN: ReadonlySet<CallPhase | undefined> = new Set(["requested", "approved", "started"]);

/**
 * The one call-phase reducer: the phase a call reaches when a record of kind `step` follows `phase` (`undefined`: the call has no record yet), or `undefined` when the
 * step cannot follow it.
 */
export function nextPhase(phase: CallPhase | undefined, step: CallStep, denied = false): CallPhase | undefined {
  switch (step) {
    case "call_requested":
      return phase === undefined ? "requested" : undefined;
    case "approval_decided":
      return phase === "requested" ? (denied ? "denied" : "approved") : undefined;
    case "call_started":
      return phase === "approved" ? "started" : undefined;
    case "call_progress":
    case "call_elicitation_asked":
    case "call_elicitation_answered":
      return phase === "started" ? "started" : undefined;
    case "call_finished":
      return OPEN.has(phase) ? "finished" : undefined;
  }
}
/** Whether a call in this phase still owes its terminal record. */
export function isOpen(phase: CallPhase | undefined): boolean {
  return OPEN.has(phase);
}
/** The step a record's kind is, or `undefined` for a record that names no call. */
export function stepOf(kind: unknown): CallStep | undefined {
  return STEPS.has(kind) ? (kind as CallStep) : undefined;
}
/**
 * A session's calls as its records, read oldest first, leave them: how many were requested, and which are open with their phase and decider, as the head row keeps
 * them.
 */
export class CallTally {
  requested = 0;
  readonly open = new Map<string, OpenCallEntry>();
  private readonly ended = new Set<string>();

  add(content: Readonly<Record<string, unknown>>): void {
    const callId = content.callId;
    const step = stepOf(content.kind);
    if (typeof callId !== "string" || step === undefined) return;
    const entry = this.open.get(callId);
    const phase = entry?.[0] ?? (this.ended.has(callId) ? "finished" : undefined);
    const next = nextPhase(phase, step, content.decision === "denied");
    if (next === undefined) return;
    if (step === "call_requested") this.requested += 1;
    if (!isOpen(next)) {
      this.open.delete(callId);
      this.ended.add(callId);
      return;
    }
    const by = step === "approval_decided" ? (content.by as ApprovalDecider) : entry?.[1];
    this.open.set(callId, by === undefined ? [next] : [next, by]);
  }
}

const DECIDERS: ReadonlySet<unknown> = new Set(["person", "policy", "bypass"]);

/** A head row's `open_calls` cell as a map, or `undefined` when it is not what the writer writes. */
export function parseOpenCalls(cell: unknown): Map<string, OpenCallEntry> | undefined {
  if (typeof cell !== "string") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(cell);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  const calls = new Map<string, OpenCallEntry>();
  for (const [callId, entry] of Object.entries(parsed)) {
    if (!Array.isArray(entry) || entry.length < 1 || entry.length > 2 || !OPEN.has(entry[0])) return undefined;
    if (entry.length === 2 && !DECIDERS.has(entry[1])) return undefined;
    calls.set(callId, entry as unknown as OpenCallEntry);
  }
  return calls;
}
/** The head row's `open_calls` text for these open calls: `{"<callId>":["<phase>","<decidedBy>"]}`. */
export function openCallsJson(
  calls: Iterable<{ readonly callId: string; readonly phase: CallPhase; readonly decidedBy?: ApprovalDecider | undefined }>,
): string {
  let text = "{";
  for (const call of calls) {
    if (text.length > 1) text += ",";
    text += `${jsonString(call.callId)}:["${call.phase}"${call.decidedBy === undefined ? "" : `,"${call.decidedBy}"`}]`;
  }
  return `${text}}`;
}
/** How a head row's `open_calls` disagrees with what the chain leaves open, if it does. */
export function openCallsProblem(cell: unknown, chain: CallTally): string | undefined {
  const row = parseOpenCalls(cell);
  if (row === undefined) return `altered index: live_sessions.open_calls is ${describeCell(cell)} that is not the JSON object of open calls the journal writes`;
  for (const [callId, entry] of row) {
    const open = chain.open.get(callId);
    if (open === undefined)
      return `altered index: live_sessions.open_calls lists call ${JSON.stringify(callId)} as open (${entry[0]}), but the chain has no such open call (never requested, or already ended)`;
    if (open[0] !== entry[0] || open[1] !== entry[1])
      return `altered index: live_sessions.open_calls gives call ${JSON.stringify(callId)} as ${JSON.stringify(entry)}, the chain as ${JSON.stringify(open)}`;
  }
  for (const callId of chain.open.keys()) {
    if (!row.has(callId)) return `altered index: live_sessions.open_calls omits call ${JSON.stringify(callId)}, which the chain leaves open`;
  }
  return undefined;
}
