import { describeCell } from "./damage.js";
import type { OpenCallEntry } from "./live-state.js";
import type { ApprovalDecider } from "./records.js";

/**
 * What a session's records say about its calls, record by record: how many were
 * requested (the head row's `calls`, `sessions.final_calls` once closed) and which are
 * open, with their phase and decider, exactly as the writer keeps them in the head row's
 * `open_calls` (requested and neither denied nor finished). `verify()` holds the index
 * columns to it.
 */
export class CallTally {
  requested = 0;
  readonly open = new Map<string, OpenCallEntry>();

  add(content: Readonly<Record<string, unknown>>): void {
    const callId = content.callId;
    if (typeof callId !== "string") return;
    switch (content.kind) {
      case "call_requested":
        this.requested += 1;
        this.open.set(callId, ["requested"]);
        return;
      case "approval_decided": {
        if (!this.open.has(callId)) return;
        if (content.decision === "denied") this.open.delete(callId);
        else this.open.set(callId, ["approved", content.by as ApprovalDecider]);
        return;
      }
      case "call_started": {
        const call = this.open.get(callId);
        if (call !== undefined) this.open.set(callId, call[1] === undefined ? ["started"] : ["started", call[1]]);
        return;
      }
      case "call_finished":
        this.open.delete(callId);
    }
  }
}

const OPEN_PHASES: ReadonlySet<unknown> = new Set(["requested", "approved", "started"]);
const DECIDERS: ReadonlySet<unknown> = new Set(["person", "policy", "bypass"]);

/**
 * A head row's `open_calls` (`{"<callId>":["<phase>","<decidedBy>"]}`), or `undefined`
 * when the cell is not that JSON (not text, not JSON, or entries of another shape).
 */
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
    if (!Array.isArray(entry) || entry.length < 1 || entry.length > 2 || !OPEN_PHASES.has(entry[0])) return undefined;
    if (entry.length === 2 && !DECIDERS.has(entry[1])) return undefined;
    calls.set(callId, entry as unknown as OpenCallEntry);
  }
  return calls;
}

/**
 * Where a head row's `open_calls` disagrees with the open calls its chain leaves, as a
 * problem naming the column; `undefined` when they agree (in any order).
 */
export function openCallsProblem(cell: unknown, chain: CallTally): string | undefined {
  const row = parseOpenCalls(cell);
  if (row === undefined) {
    return `altered index: live_sessions.open_calls is ${describeCell(cell)} that is not the JSON object of open calls the journal writes`;
  }
  for (const [callId, entry] of row) {
    const open = chain.open.get(callId);
    if (open === undefined) {
      return `altered index: live_sessions.open_calls lists call ${JSON.stringify(callId)} as open (${entry[0]}), but the chain has no such open call (never requested, or already ended)`;
    }
    if (open[0] !== entry[0] || open[1] !== entry[1]) {
      return `altered index: live_sessions.open_calls gives call ${JSON.stringify(callId)} as ${JSON.stringify(entry)}, the chain as ${JSON.stringify(open)}`;
    }
  }
  for (const callId of chain.open.keys()) {
    if (!row.has(callId)) return `altered index: live_sessions.open_calls omits call ${JSON.stringify(callId)}, which the chain leaves open`;
  }
  return undefined;
}
