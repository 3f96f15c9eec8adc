import type Database from "better-sqlite3";
import { chainHash, GENESIS_HASH } from "./chain.js";
import { FrameReader, parseFrameLine } from "./frames.js";

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
        const frames = reached.get(count.session_ref);
        if (frames === undefined) {
          const problem = `record belongs to session ref ${count.session_ref}, which has no session row (the session was removed)`;
          return { ok: false, sessions: rows.length, records: checked, firstBreak: { sessionId: "", seq: count.first, problem } };
        }
        if (frames !== count.frames) {
          const session = rows.find((row) => row.ref === count.session_ref)!;
          const problem = `${count.frames - frames} frame(s) of the session are not on its chain (inserted or relinked records)`;
          return { ok: false, sessions: rows.length, records: checked, firstBreak: { sessionId: session.session_id, seq: count.first, problem } };
        }
      }
    }
    return { ok: true, sessions: rows.length, records: checked };
  })();
}

function verifySession(session: SessionRow, reader: FrameReader): { records: number; frames: number; problem?: Problem } {
  const closed = session.closed_at !== null;
  const head = closed ? session.final_frame : session.head_frame;
  if (!closed && session.head_frame === null) {
    return { records: 0, frames: 0, problem: { seq: 1, problem: "missing record: the open session has no head row" } };
  }
  const chain = reader.chain({ ref: session.ref, headFrame: head });
  let expected = 1;
  let previous = GENESIS_HASH;
  let lastKind = "";
  for (const id of chain.ids) {
    const frame = reader.frame(id)!;
    if (frame.firstSeq !== expected) {
      return { records: expected - 1, frames: chain.ids.length, problem: { seq: expected, problem: `missing record: expected seq ${expected}, found seq ${frame.firstSeq}` } };
    }
    for (const line of frame.lines) {
      const problem = checkRecord(session, line, expected, previous);
      if (typeof problem === "string") return { records: expected - 1, frames: chain.ids.length, problem: { seq: expected, problem } };
      previous = problem.hash;
      lastKind = problem.kind;
      expected += 1;
    }
  }
  const last = expected - 1;
  if (chain.problem !== undefined) return { records: last, frames: chain.ids.length, problem: { seq: 1, problem: chain.problem } };
  if (last === 0) return { records: 0, frames: 0, problem: { seq: 1, problem: "missing record: the session has no session_opened record" } };
  const endSeq = closed ? session.final_seq : session.seq;
  const endHash = closed ? session.final_hash : session.hash;
  if (endSeq !== last || endHash !== previous) {
    const problem = closed
      ? `missing record: the session closed at seq ${session.final_seq} with hash ${session.final_hash}, but its chain ends at seq ${last}`
      : `missing record: the session's head row says seq ${session.seq} with hash ${session.hash}, but its chain ends at seq ${last}`;
    return { records: last, frames: chain.ids.length, problem: { seq: last + 1, problem } };
  }
  if (!closed && lastKind === "session_closed") {
    return { records: last, frames: chain.ids.length, problem: { seq: last, problem: "the chain ends with session_closed but the session row is not closed" } };
  }
  return { records: last, frames: chain.ids.length };
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
