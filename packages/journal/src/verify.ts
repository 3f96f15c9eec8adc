import type Database from "better-sqlite3";
import { chainHash, GENESIS_HASH } from "./chain.js";
import { type FrameLink, FrameReader, parseFrameLine } from "./frames.js";

/**
 * Where a chain first breaks: the session, the `seq` at fault, and what is wrong there.
 *
 * @example
 * ```ts
 * const where = journal.verify().firstBreak; // { sessionId, seq, problem } | undefined
 * ```
 */
export interface ChainBreak {
  readonly sessionId: string;
  readonly seq: number;
  readonly problem: string;
}

/**
 * The result of {@link verifyChains}.
 *
 * @example
 * ```ts
 * const report = journal.verify(); if (!report.ok) console.error(report.firstBreak);
 * ```
 */
export interface VerifyReport {
  readonly ok: boolean;
  /** Sessions checked. */
  readonly sessions: number;
  /** Records checked before the first break (all of them when `ok`). */
  readonly records: number;
  readonly firstBreak?: ChainBreak;
}

interface SessionRow {
  ref: number;
  session_id: string;
  execution_identity: string;
  closed_at: string | null;
  final_seq: number | null;
  final_hash: string | null;
  final_frame: number | null;
  head_frame: number | null;
  seq: number | null;
  hash: string | null;
}

type Problem = { seq: number; problem: string };

/**
 * Walks every session's chain (or one session's) in one read transaction, so a writer
 * committing meanwhile cannot make a consistent file look broken. From the session's
 * head back along `prev_frame`, then forward, it checks per record: `seq` has no gap,
 * the stored hash is `sha256(previous hash + content)` (so an altered record, or a link
 * to a record that is not its predecessor, breaks there), the content parses and names
 * its session, `seq` and kind; per session: the first record opens it under the identity
 * the session row names, and the chain ends exactly at the head the file notes (the head
 * row of an open session, or the final seq/hash noted when it closed), so a cut-off
 * tail is a break too. A whole-file check also counts every session's frames, so a frame
 * no chain reaches (an orphan, or one whose session row was removed) is reported.
 */
export function verifyChains(db: Database.Database, sessionId?: string): VerifyReport {
  const sessions = db.prepare<unknown[], SessionRow>(
    `SELECT s.ref, s.session_id, s.execution_identity, s.closed_at, s.final_seq, s.final_hash, s.final_frame,
            l.head_frame, l.seq, l.hash
       FROM sessions s LEFT JOIN live_sessions l ON l.ref = s.ref
      ${sessionId === undefined ? "" : "WHERE s.session_id = ?"} ORDER BY s.ref`,
  );
  const frameCounts = db.prepare<[], { session_ref: number; frames: number; first: number }>(
    "SELECT session_ref, count(*) AS frames, min(first_seq) AS first FROM frames GROUP BY session_ref",
  );
  const frames = new FrameReader(db);
  return db.transaction((): VerifyReport => {
    let checked = 0;
    const rows = sessionId === undefined ? sessions.all() : sessions.all(sessionId);
    const reached = new Map<number, number>();
    for (const session of rows) {
      const result = verifySession(session, frames);
      checked += result.records;
      reached.set(session.ref, result.frames);
      if (result.problem !== undefined) {
        return { ok: false, sessions: rows.length, records: checked, firstBreak: { sessionId: session.session_id, ...result.problem } };
      }
    }
    if (sessionId === undefined) {
      for (const count of frameCounts.all()) {
        const reachedFrames = reached.get(count.session_ref);
        if (reachedFrames === undefined) {
          const problem = `record belongs to session ref ${count.session_ref}, which has no session row (the session was removed)`;
          return { ok: false, sessions: rows.length, records: checked, firstBreak: { sessionId: "", seq: count.first, problem } };
        }
        if (reachedFrames !== count.frames) {
          const session = rows.find((row) => row.ref === count.session_ref)!;
          const orphan = firstOffChain(session, frames);
          const problem = `${count.frames - reachedFrames} frame(s) of the session are not on its chain (inserted or relinked records), the first being frame ${orphan.id} from seq ${orphan.firstSeq}`;
          return { ok: false, sessions: rows.length, records: checked, firstBreak: { sessionId: session.session_id, seq: orphan.firstSeq, problem } };
        }
      }
    }
    return { ok: true, sessions: rows.length, records: checked };
  })();
}

/** The session's frame with the lowest `seq` among those its (intact) chain does not reach. */
function firstOffChain(session: SessionRow, reader: FrameReader): FrameLink {
  const head = session.closed_at !== null ? session.final_frame : session.head_frame;
  const onChain = new Set(reader.chain({ ref: session.ref, headFrame: head }).ids);
  let first: FrameLink | undefined;
  for (const frame of reader.sessionFrames(session.ref)) {
    if (!onChain.has(frame.id) && (first === undefined || frame.firstSeq < first.firstSeq)) first = frame;
  }
  return first!;
}

function verifySession(session: SessionRow, reader: FrameReader): { records: number; frames: number; problem?: Problem } {
  const closed = session.closed_at !== null;
  const head = closed ? session.final_frame : session.head_frame;
  const chain =
    head === null
      ? { ids: [], problem: closed ? "missing record: the closed session notes no final frame" : "missing record: the open session has no head row" }
      : reader.chain({ ref: session.ref, headFrame: head });
  if (chain.problem !== undefined) return verifyBrokenChain(session, reader, chain.problem);
  const walk = walkFrames(session, reader, chain.ids);
  const frames = chain.ids.length;
  if (walk.problem !== undefined) return { records: walk.last, frames, problem: walk.problem };
  const last = walk.last;
  if (last === 0) return { records: 0, frames: 0, problem: { seq: 1, problem: "missing record: the session has no session_opened record" } };
  const endSeq = closed ? session.final_seq : session.seq;
  const endHash = closed ? session.final_hash : session.hash;
  if (endSeq !== last || endHash !== walk.hash) {
    const problem = closed
      ? `missing record: the session closed at seq ${session.final_seq} with hash ${session.final_hash}, but its chain ends at seq ${last}`
      : `missing record: the session's head row says seq ${session.seq} with hash ${session.hash}, but its chain ends at seq ${last}`;
    return { records: last, frames, problem: { seq: last + 1, problem } };
  }
  if (!closed && walk.lastKind === "session_closed") {
    return { records: last, frames, problem: { seq: last, problem: "the chain ends with session_closed but the session row is not closed" } };
  }
  return { records: last, frames };
}

/**
 * A chain the walk back from its head could not finish (a frame gone, a link to another
 * session or forward, no head): the records are checked from the session's first frame
 * forward as far as the links hold, and the break is reported at the first record past
 * the last good one, whatever part of the chain the walk back did reach.
 */
function verifyBrokenChain(session: SessionRow, reader: FrameReader, headProblem: string): { records: number; frames: number; problem: Problem } {
  const start = reader.fromStart(session.ref);
  const walk = walkFrames(session, reader, start.ids);
  if (walk.problem !== undefined) return { records: walk.last, frames: start.ids.length, problem: walk.problem };
  const held = walk.last === 0 ? "the chain holds no record" : walk.last === 1 ? "the chain holds seq 1" : `the chain holds seq 1 to ${walk.last}`;
  let problem: string;
  if (start.next !== undefined) {
    problem = `${linkProblem(reader, session.ref, start.next)}; ${held}, then resumes at seq ${start.next.firstSeq}`;
  } else {
    const endSeq = session.closed_at !== null ? session.final_seq : session.seq;
    const end = endSeq === null ? "" : session.closed_at !== null ? ` (the session closed at seq ${endSeq})` : ` (the session's head row says seq ${endSeq})`;
    problem = `${headProblem}; ${held}${end}`;
  }
  return { records: walk.last, frames: start.ids.length, problem: { seq: walk.last + 1, problem } };
}

/** Why the frame the chain resumes at is not linked to the last good frame before it. */
function linkProblem(reader: FrameReader, ref: number, frame: FrameLink): string {
  if (frame.prevFrame === null) return `broken link: frame ${frame.id} starts a second chain (it links to no earlier frame)`;
  const previous = reader.linkOf(frame.prevFrame);
  if (previous === undefined) return `missing record: frame ${frame.prevFrame} of the chain is gone`;
  if (frame.prevFrame >= frame.id) return `broken link: frame ${frame.id} links forward to frame ${frame.prevFrame}`;
  if (previous.sessionRef !== ref) return `broken link: frame ${frame.id} links to frame ${frame.prevFrame} of another session (ref ${previous.sessionRef})`;
  return `broken link: frame ${frame.id} links to frame ${frame.prevFrame}, which is not the frame before it`;
}

/**
 * Checks the records of the given frames in order from seq 1: `last` is the last good
 * seq, `hash` its hash, and `problem` the first record missing or broken, if any.
 */
function walkFrames(session: SessionRow, reader: FrameReader, ids: readonly number[]): { last: number; hash: string; lastKind: string; problem?: Problem } {
  let expected = 1;
  let previous = GENESIS_HASH;
  let lastKind = "";
  for (const id of ids) {
    const frame = reader.frame(id)!;
    if (frame.firstSeq !== expected) {
      return { last: expected - 1, hash: previous, lastKind, problem: { seq: expected, problem: `missing record: expected seq ${expected}, found seq ${frame.firstSeq}` } };
    }
    for (const line of frame.lines) {
      const problem = checkRecord(session, line, expected, previous);
      if (typeof problem === "string") return { last: expected - 1, hash: previous, lastKind, problem: { seq: expected, problem } };
      previous = problem.hash;
      lastKind = problem.kind;
      expected += 1;
    }
  }
  return { last: expected - 1, hash: previous, lastKind };
}

function checkRecord(session: SessionRow, line: string, expected: number, previous: string): string | { hash: string; kind: string } {
  const parsed = parseFrameLine(line);
  if (parsed === undefined) return "torn record: the stored line is not a hash and content";
  if (chainHash(previous, parsed.data) !== parsed.hash) {
    return "altered record or broken link: its stored hash is not sha256(previous record's hash + its content)";
  }
  let content: Record<string, unknown>;
  try {
    content = JSON.parse(parsed.data) as Record<string, unknown>;
  } catch {
    return "torn record: its content is not JSON";
  }
  if (content.sessionId !== session.session_id || content.seq !== expected || typeof content.kind !== "string") {
    return "altered record: its content names another session, seq or no kind";
  }
  if (expected === 1) {
    if (content.kind !== "session_opened") return `the first record is ${String(content.kind)}, not session_opened`;
    if (content.executionIdentity !== session.execution_identity) {
      return "altered session: the session row's execution identity differs from the one its session_opened record holds";
    }
  }
  return { hash: parsed.hash, kind: content.kind };
}
