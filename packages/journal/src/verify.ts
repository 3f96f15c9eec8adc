import type Database from "better-sqlite3";
import { chainHash, GENESIS_HASH } from "./chain.js";

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
}

interface Row {
  seq: number;
  kind: string;
  call_id: string | null;
  data: string;
  prev_hash: string;
  hash: string;
}

const PAGE = 2000;

/**
 * Walks every session's chain (or one session's) in one read transaction, so a writer
 * committing meanwhile cannot make a consistent file look broken. Checks, per record:
 * `seq` has no gap, `prevHash` is the previous record's hash (the genesis hash for the
 * first), `hash` recomputes from the stored content, the content parses and agrees with
 * the indexed columns; per session: the first record opens it under the identity the
 * session row names, and a closed session ends exactly at the hash noted when it closed
 * (so a cut-off tail is a break too).
 */
export function verifyChains(db: Database.Database, sessionId?: string): VerifyReport {
  const sessions = db.prepare<unknown[], SessionRow>(
    `SELECT ref, session_id, execution_identity, closed_at, final_seq, final_hash FROM sessions
      ${sessionId === undefined ? "" : "WHERE session_id = ?"} ORDER BY ref`,
  );
  const page = db.prepare<[number, number, number], Row>(
    "SELECT seq, kind, call_id, data, prev_hash, hash FROM records WHERE session_ref = ? AND seq > ? ORDER BY seq LIMIT ?",
  );
  const orphans = db.prepare<[], { session_ref: number; seq: number }>(
    "SELECT session_ref, seq FROM records WHERE session_ref NOT IN (SELECT ref FROM sessions) LIMIT 1",
  );
  return db.transaction((): VerifyReport => {
    let checked = 0;
    const rows = sessionId === undefined ? sessions.all() : sessions.all(sessionId);
    for (const session of rows) {
      const result = verifySession(session, page);
      checked += result.records;
      if (result.problem !== undefined) {
        return { ok: false, sessions: rows.length, records: checked, firstBreak: { sessionId: session.session_id, ...result.problem } };
      }
    }
    const orphan = sessionId === undefined ? orphans.get() : undefined;
    if (orphan !== undefined) {
      const problem = `record belongs to session ref ${orphan.session_ref}, which has no session row (the session was removed)`;
      return { ok: false, sessions: rows.length, records: checked, firstBreak: { sessionId: "", seq: orphan.seq, problem } };
    }
    return { ok: true, sessions: rows.length, records: checked };
  })();
}

function verifySession(
  session: SessionRow,
  page: Database.Statement<[number, number, number], Row>,
): { records: number; problem?: { seq: number; problem: string } } {
  let expected = 1;
  let previous = GENESIS_HASH;
  let lastKind = "";
  for (;;) {
    const rows = page.all(session.ref, expected - 1, PAGE);
    for (const row of rows) {
      const problem = checkRecord(session, row, expected, previous);
      if (problem !== undefined) return { records: expected - 1, problem: { seq: expected, problem } };
      previous = row.hash;
      lastKind = row.kind;
      expected += 1;
    }
    if (rows.length < PAGE) break;
  }
  const last = expected - 1;
  if (last === 0) return { records: 0, problem: { seq: 1, problem: "missing record: the session has no session_opened record" } };
  if (session.closed_at !== null) {
    if (session.final_seq !== last || session.final_hash !== previous) {
      return {
        records: last,
        problem: {
          seq: last + 1,
          problem: `missing record: the session closed at seq ${session.final_seq} with hash ${session.final_hash}, but its chain ends at seq ${last}`,
        },
      };
    }
  } else if (lastKind === "session_closed") {
    return { records: last, problem: { seq: last, problem: "the chain ends with session_closed but the session row is not closed" } };
  }
  return { records: last };
}

function checkRecord(session: SessionRow, row: Row, expected: number, previous: string): string | undefined {
  if (row.seq !== expected) return `missing record: expected seq ${expected}, found seq ${row.seq}`;
  if (row.prev_hash !== previous) return `broken link: prevHash ${row.prev_hash} is not the hash of record ${expected - 1}`;
  if (chainHash(row.prev_hash, row.data) !== row.hash) return "altered record: its hash does not match its content";
  let content: Record<string, unknown>;
  try {
    content = JSON.parse(row.data) as Record<string, unknown>;
  } catch {
    return "torn record: its content is not JSON";
  }
  if (content.sessionId !== session.session_id || content.seq !== row.seq || content.kind !== row.kind) {
    return "altered record: its indexed columns (session, seq, kind) disagree with its hashed content";
  }
  if ((content.callId ?? null) !== row.call_id) return "altered record: its call_id column disagrees with its hashed content";
  if (expected === 1) {
    if (row.kind !== "session_opened") return `the first record is ${row.kind}, not session_opened`;
    if (content.executionIdentity !== session.execution_identity) {
      return "altered session: the session row's execution identity differs from the one its session_opened record holds";
    }
  }
  return undefined;
}
