import { CallTally, openCallsProblem } from "../records/call-phase.js";
import { chainHash, GENESIS_HASH } from "../records/chain.js";
import { describeCell, parseContent } from "../store/damage.js";
import { parseFrameLine, type RawFrame } from "../store/frames.js";

/** A session as `verify()` reads it: its row and, while it is open, its head row. */
export interface VerifiedSessionRow {
  ref: number;
  session_id: string;
  execution_identity: unknown;
  workspace: unknown;
  bundle_dir: unknown;
  opened_at: unknown;
  closed_at: unknown;
  final_seq: number | null;
  final_hash: string | null;
  final_frame: number | null;
  final_calls: unknown;
  head_frame: number | null;
  seq: number | null;
  hash: string | null;
  calls: unknown;
  open_calls: unknown;
}
/** A break: the `seq` at fault and what is wrong there. */
export interface Problem {
  readonly seq: number;
  readonly problem: string;
}

/** One session's chain, checked record by record as its frames arrive (oldest first), and then at its end against the head the file notes and the index columns. */
export class ChainWalk {
  private expected = 1;
  private previous = GENESIS_HASH;
  private lastKind = "";
  private closedAt: unknown;
  private readonly calls = new CallTally();
  /** The first record missing or broken, once {@link frame} returned false. */
  problem: Problem | undefined;

  constructor(readonly session: VerifiedSessionRow) {}
  /** The last good `seq` (0 before the first record). */
  get last(): number {
    return this.expected - 1;
  }
  get closed(): boolean {
    return this.session.closed_at !== null;
  }
  /** Checks one frame's records in order; false (with {@link problem} set) at the first one missing or broken. */
  frame(id: number, frame: RawFrame | undefined): boolean {
    if (frame === undefined) return this.fail(`missing record: frame ${id} of the chain is gone`);
    if (frame.firstSeq !== this.expected) {
      const found = typeof frame.firstSeq === "number" || typeof frame.firstSeq === "string" ? frame.firstSeq : describeCell(frame.firstSeq);
      return this.fail(`missing record: expected seq ${this.expected}, found seq ${found}`);
    }
    if (typeof frame.body !== "string")
      return this.fail(`damaged frame: frame ${id} holds ${describeCell(frame.body)} where the journal writes its records as text`);
    for (const line of frame.body.split("\n")) {
      const problem = this.record(line);
      if (problem !== undefined) return this.fail(problem);
    }
    return true;
  }
  /**
   * The checks at the chain's end, once every frame passed: the chain ends exactly at the head the file notes (the head row of an open session, the final seq and hash
   * of a closed one, so a cut-off tail is a break), a closed session ends with `session_closed`, and the index columns agree with the chain.
   */
  end(): Problem | undefined {
    const session = this.session;
    const last = this.last;
    if (last === 0) return { seq: 1, problem: "missing record: the session has no session_opened record" };
    const closed = this.closed;
    const endSeq = closed ? session.final_seq : session.seq;
    const endHash = closed ? session.final_hash : session.hash;
    if (endSeq !== last || endHash !== this.previous) {
      const problem = closed
        ? `missing record: the session closed at seq ${session.final_seq} with hash ${session.final_hash}, but its chain ends at seq ${last}`
        : `missing record: the session's head row says seq ${session.seq} with hash ${session.hash}, but its chain ends at seq ${last}`;
      return { seq: last + 1, problem };
    }
    if (!closed && this.lastKind === "session_closed") return { seq: last, problem: "the chain ends with session_closed but the session row is not closed" };
    if (closed && this.lastKind !== "session_closed")
      return { seq: last, problem: `altered index: sessions.closed_at says the session closed, but its chain ends with ${this.lastKind}, not session_closed` };
    if (closed && session.closed_at !== this.closedAt)
      return { seq: last, problem: indexProblem("sessions.closed_at", session.closed_at, "the session_closed record", this.closedAt) };
    if (closed && session.head_frame !== null)
      return { seq: last, problem: "altered index: the closed session still has a live_sessions head row (its close removes it)" };
    const column = closed ? "sessions.final_calls" : "live_sessions.calls";
    const calls = closed ? session.final_calls : session.calls;
    if (calls !== this.calls.requested)
      return { seq: last, problem: `altered index: ${column} is ${shown(calls)}, but the chain holds ${this.calls.requested} call_requested record(s)` };
    if (!closed) {
      const problem = openCallsProblem(session.open_calls, this.calls);
      if (problem !== undefined) return { seq: last, problem };
    }
    return undefined;
  }
  private fail(problem: string): false {
    this.problem = { seq: this.expected, problem };
    return false;
  }
  private record(line: string): string | undefined {
    const parsed = parseFrameLine(line);
    if (parsed === undefined) return "torn record: the stored line is not a hash and content";
    if (chainHash(this.previous, parsed.data) !== parsed.hash)
      return "altered record or broken link: its stored hash is not sha256(previous record's hash + its content)";
    const content = parseContent(parsed.data);
    if (typeof content === "string") return content;
    if (content.sessionId !== this.session.session_id || content.seq !== this.expected || typeof content.kind !== "string")
      return "altered record: its content names another session, seq or no kind";
    if (this.expected === 1) {
      const problem = this.opening(content);
      if (problem !== undefined) return problem;
    }
    if (content.kind === "session_closed") this.closedAt = content.at;
    this.calls.add(content);
    this.previous = parsed.hash;
    this.lastKind = content.kind;
    this.expected += 1;
    return undefined;
  }
  /** The first record opens the session as its row says. */
  private opening(content: Readonly<Record<string, unknown>>): string | undefined {
    const session = this.session;
    if (content.kind !== "session_opened") return `the first record is ${String(content.kind)}, not session_opened`;
    if (content.executionIdentity !== session.execution_identity)
      return "altered session: the session row's execution identity differs from the one its session_opened record holds";
    const opened = "the session_opened record";
    if (content.workspace !== session.workspace) return indexProblem("sessions.workspace", session.workspace, opened, content.workspace);
    if ((content.bundleDir ?? null) !== session.bundle_dir) return indexProblem("sessions.bundle_dir", session.bundle_dir, opened, content.bundleDir);
    if (content.at !== session.opened_at) return indexProblem("sessions.opened_at", session.opened_at, opened, content.at);
    return undefined;
  }
}

function indexProblem(column: string, cell: unknown, record: string, value: unknown): string {
  return `altered index: ${column} is ${shown(cell)}, but ${record} ${value === undefined ? "has none" : `says ${shown(value)}`}`;
}
/** A cell or field as a problem shows it: JSON text for strings (cut at 80 characters), else its kind. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === "number") return String(value);
  return describeCell(value);
}
