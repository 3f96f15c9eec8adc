import type Database from "better-sqlite3";
import { type FrameLink, FrameReader, type RawFrame, type ReadStep } from "../store/frames.js";
import { ReadWindow } from "../read/read-window.js";
import { ChainWalk, type VerifiedSessionRow } from "./verify-chain.js";

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
 * The result of `Journal.verify()`.
 *
 * @example
 * ```ts
 * const report = journal.verify(); if (!report.ok) console.error(report.firstBreak);
 * ```
 */
export interface VerifyReport {
  readonly ok: boolean;
  /** Sessions in the file (or 1 / 0 for one session). */
  readonly sessions: number;
  /** Records checked before the first break (all of them when `ok`). */
  readonly records: number;
  readonly firstBreak?: ChainBreak;
}
/** How long `verify()`'s read transactions last. */
export interface VerifyPacing {
  /** Reads per read transaction, and frames fetched before they are checked. */
  readonly readsPerTransaction?: number;
  /** Runs after each read transaction ends, with none open. */
  readonly betweenTransactions?: () => void;
}

// Reads per read transaction; frames (and characters) fetched before they are checked with no transaction open;
// session rows read at a time; frame ids counted per query by the whole-file orphan check.
const READS_PER_TRANSACTION = 2048;
const FRAMES_PER_CHECK = 256;
const CHARS_PER_CHECK = 1 << 20;
const SESSIONS_PER_PAGE = 256;
const FRAME_IDS_PER_COUNT = 16_384;

const ROW_COLUMNS = `s.ref, s.session_id, s.execution_identity, s.workspace, s.bundle_dir, s.opened_at, s.closed_at,
  s.final_seq, s.final_hash, s.final_frame, s.final_calls`;
const HEAD_COLUMNS = "l.head_frame, l.seq, l.hash, l.calls, l.open_calls";
const SESSION_COLUMNS = `${ROW_COLUMNS}, ${HEAD_COLUMNS} FROM sessions s LEFT JOIN live_sessions l ON l.ref = s.ref`;

type HeadRow = Pick<VerifiedSessionRow, "ref" | "head_frame" | "seq" | "hash" | "calls" | "open_calls">;

/** Walks every session's chain (or one session's) and reports the first break, in read transactions of bounded length (see `ReadWindow`). */
export function verifyChains(db: Database.Database, sessionId?: string, pacing: VerifyPacing = {}): VerifyReport {
  let run: Verification;
  try {
    run = new Verification(db, pacing);
  } catch (error) {
    // Statements SQLite cannot prepare on this file (a damaged schema lost a column): nothing is readable.
    return unreadableFile(error);
  }
  let report: VerifyReport;
  try {
    report = sessionId === undefined ? run.file() : run.one(sessionId);
  } catch (error) {
    report = run.unreadable(error);
  }
  try {
    run.window.release();
  } catch (error) {
    // SQLite can report a damaged file only when the last read transaction ends: that is
    // a break too, unless the walk already found one (the first break stands).
    if (report.ok) report = unreadableFile(error, report);
  }
  return report;
}
/** A break that no session or record can be blamed for: the file itself could not be read. */
function unreadableFile(error: unknown, checked?: VerifyReport): VerifyReport {
  const problem = `unreadable: ${error instanceof Error ? error.message : String(error)}`;
  return { ok: false, sessions: checked?.sessions ?? 0, records: checked?.records ?? 0, firstBreak: { sessionId: "", seq: 0, problem } };
}

interface Break extends ChainBreak {
  /** Records checked before it. */
  readonly records: number;
}
/** A fetched frame waiting for its checks, or the end of a session's chain. */
type Queued = { readonly walk: ChainWalk; readonly id: number; readonly frame: RawFrame | undefined } | { readonly walk: ChainWalk; readonly end: true };

class Verification {
  readonly window: ReadWindow;
  private readonly frames: FrameReader;
  private readonly read: ReadStep;
  private readonly batch: number;
  private readonly sql;
  private queue: Queued[] = [];
  private queuedChars = 0;
  /** Records of the sessions checked whole so far. */
  private records = 0;
  private sessions = 0;
  /** The session being fetched or checked (for a read that fails). */
  private current: ChainWalk | undefined;

  constructor(db: Database.Database, pacing: VerifyPacing) {
    const reads = Math.max(1, pacing.readsPerTransaction ?? READS_PER_TRANSACTION);
    this.batch = Math.min(reads, FRAMES_PER_CHECK);
    this.window = new ReadWindow(db, reads, pacing.betweenTransactions);
    this.read = (read) => this.window.read(read);
    this.frames = new FrameReader(db);
    this.sql = {
      start: db.prepare<[], { frames: number | null; sessions: number; ref: number | null }>(
        "SELECT (SELECT max(id) FROM frames) AS frames, count(*) AS sessions, max(ref) AS ref FROM sessions",
      ),
      heads: db.prepare<[], HeadRow>(`SELECT l.ref, ${HEAD_COLUMNS} FROM live_sessions l`),
      // The head columns come from the start's snapshot.
      page: db.prepare<[number, number, number], VerifiedSessionRow>(
        `SELECT ${ROW_COLUMNS}, NULL AS head_frame, NULL AS seq, NULL AS hash, NULL AS calls, NULL AS open_calls
           FROM sessions s WHERE s.ref > ? AND s.ref <= ? ORDER BY s.ref LIMIT ?`,
      ),
      one: db.prepare<[string], VerifiedSessionRow>(`SELECT ${SESSION_COLUMNS} WHERE s.session_id = ?`),
      byRef: db.prepare<[number], VerifiedSessionRow>(`SELECT ${SESSION_COLUMNS} WHERE s.ref = ?`),
      counts: db.prepare<[number, number], { session_ref: number; frames: number; first: number }>(
        "SELECT session_ref, count(*) AS frames, min(first_seq) AS first FROM frames WHERE id > ? AND id <= ? GROUP BY session_ref",
      ),
    };
  }
  one(sessionId: string): VerifyReport {
    const row = this.read(() => this.sql.one.get(sessionId));
    if (row === undefined) return { ok: true, sessions: 0, records: 0 };
    this.sessions = 1;
    return this.report(this.session(row) ?? this.check());
  }
  file(): VerifyReport {
    // The file as it stands now, in one read: what the walk checks.
    const start = this.read(() => {
      const bounds = this.sql.start.get()!;
      return { ...bounds, heads: new Map(this.sql.heads.all().map((head) => [head.ref, head])) };
    });
    const lastFrame = start.frames ?? 0;
    const lastRef = start.ref ?? 0;
    this.sessions = start.sessions;
    const reached = new Map<number, number>();
    for (let after = 0; ;) {
      const page = this.read(() => this.sql.page.all(after, lastRef, SESSIONS_PER_PAGE));
      if (page.length === 0) break;
      for (const row of page) {
        // Open at the start: checked as it stood then, whether it has closed since or not
        // (a session that closed since has its closing frame past `lastFrame`).
        const head = start.heads.get(row.ref);
        if (head !== undefined) {
          if (typeof row.final_frame !== "number" || row.final_frame > lastFrame) row.closed_at = null;
          row.head_frame = head.head_frame;
          row.seq = head.seq;
          row.hash = head.hash;
          row.calls = head.calls;
          row.open_calls = head.open_calls;
        }
        const broken = this.session(row, { lastFrame, reached });
        if (broken !== undefined) return this.report(broken);
      }
      after = page.at(-1)!.ref;
    }
    return this.report(this.check() ?? this.orphans(lastFrame, reached));
  }
  /** A read SQLite refused (a damaged database): a break where the walk stood. */
  unreadable(error: unknown): VerifyReport {
    const walk = this.current;
    const problem = `unreadable: ${error instanceof Error ? error.message : String(error)}`;
    return this.report({ sessionId: walk?.session.session_id ?? "", seq: (walk?.last ?? 0) + 1, problem, records: this.records + (walk?.last ?? 0) });
  }
  /**
   * Fetches one session's chain (walking back from the head its row names, then its frames oldest first) and queues it for checking; checks what is queued whenever a
   * batch is full.
   */
  private session(row: VerifiedSessionRow, orphans?: { lastFrame: number; reached: Map<number, number> }): Break | undefined {
    const walk = new ChainWalk(row);
    this.current = walk;
    const head = walk.closed ? row.final_frame : row.head_frame;
    const chain =
      head === null
        ? { ids: [], problem: walk.closed ? "missing record: the closed session notes no final frame" : "missing record: the open session has no head row" }
        : this.frames.chain({ ref: row.ref, sessionId: row.session_id, headFrame: head }, this.read);
    if (chain.problem !== undefined) return this.check() ?? this.brokenChain(walk, chain.problem);
    if (orphans !== undefined) orphans.reached.set(row.ref, chain.ids.filter((id) => id <= orphans.lastFrame).length);
    for (const id of chain.ids) {
      const frame = this.read(() => this.frames.rawFrame(id));
      this.queue.push({ walk, id, frame });
      if (typeof frame?.body === "string") this.queuedChars += frame.body.length;
      if (this.queue.length >= this.batch || this.queuedChars >= CHARS_PER_CHECK) {
        const broken = this.check();
        if (broken !== undefined) return broken;
      }
    }
    this.queue.push({ walk, end: true });
    return undefined;
  }
  /** Ends the read transaction and checks every queued frame and chain end, in order: the first break, if any. */
  private check(): Break | undefined {
    this.window.release();
    const queue = this.queue;
    this.queue = [];
    this.queuedChars = 0;
    for (const item of queue) {
      const walk = item.walk;
      this.current = walk;
      if ("end" in item) {
        const problem = walk.end();
        if (problem !== undefined) return { sessionId: walk.session.session_id, ...problem, records: this.records + walk.last };
        this.records += walk.last;
      } else if (!walk.frame(item.id, item.frame)) {
        return { sessionId: walk.session.session_id, ...walk.problem!, records: this.records + walk.last };
      }
    }
    return undefined;
  }
  /**
   * A chain the walk back from its head could not finish (a frame gone, a link to another session or forward, no head): the records are checked from the session's
   * first frame forward as far as the links hold, and the break is reported at the first record past the last good one, whatever part of the chain the walk back did
   * reach.
   */
  private brokenChain(walk: ChainWalk, headProblem: string): Break {
    const session = walk.session;
    const start = this.read(() => this.frames.fromStart(session.ref));
    for (const id of start.ids) {
      if (
        !walk.frame(
          id,
          this.read(() => this.frames.rawFrame(id)),
        )
      )
        return { sessionId: session.session_id, ...walk.problem!, records: this.records + walk.last };
    }
    const last = walk.last;
    const held = last === 0 ? "the chain holds no record" : last === 1 ? "the chain holds seq 1" : `the chain holds seq 1 to ${last}`;
    let problem: string;
    if (start.next !== undefined) {
      problem = `${this.linkProblem(session.ref, start.next)}; ${held}, then resumes at seq ${start.next.firstSeq}`;
    } else {
      const endSeq = walk.closed ? session.final_seq : session.seq;
      const end = endSeq === null ? "" : walk.closed ? ` (the session closed at seq ${endSeq})` : ` (the session's head row says seq ${endSeq})`;
      problem = `${headProblem}; ${held}${end}`;
    }
    return { sessionId: session.session_id, seq: last + 1, problem, records: this.records + last };
  }
  /** Why the frame the chain resumes at is not linked to the last good frame before it. */
  private linkProblem(ref: number, frame: FrameLink): string {
    if (frame.prevFrame === null) return `broken link: frame ${frame.id} starts a second chain (it links to no earlier frame)`;
    const previous = this.read(() => this.frames.linkOf(frame.prevFrame!));
    if (previous === undefined) return `missing record: frame ${frame.prevFrame} of the chain is gone`;
    if (frame.prevFrame >= frame.id) return `broken link: frame ${frame.id} links forward to frame ${frame.prevFrame}`;
    if (previous.sessionRef !== ref) return `broken link: frame ${frame.id} links to frame ${frame.prevFrame} of another session (ref ${previous.sessionRef})`;
    return `broken link: frame ${frame.id} links to frame ${frame.prevFrame}, which is not the frame before it`;
  }
  /**
   * Counts each session's frames among those that existed when the walk began (ids up to `lastFrame`, a range at a time, each in its own transaction) against those its
   * chain reached: a frame of a removed session, or one no chain reaches, is a break.
   */
  private orphans(lastFrame: number, reached: ReadonlyMap<number, number>): Break | undefined {
    const counts = new Map<number, { frames: number; first: number }>();
    for (let from = 0; from < lastFrame; from += FRAME_IDS_PER_COUNT) {
      const rows = this.read(() => this.sql.counts.all(from, Math.min(from + FRAME_IDS_PER_COUNT, lastFrame)));
      this.window.release();
      for (const row of rows) {
        const count = counts.get(row.session_ref);
        if (count === undefined) counts.set(row.session_ref, { frames: row.frames, first: row.first });
        else {
          count.frames += row.frames;
          if (row.first < count.first) count.first = row.first;
        }
      }
    }
    for (const ref of [...counts.keys()].sort((a, b) => a - b)) {
      const count = counts.get(ref)!;
      const reachedFrames = reached.get(ref);
      if (reachedFrames === undefined) {
        const problem = `record belongs to session ref ${ref}, which has no session row (the session was removed)`;
        return { sessionId: "", seq: count.first, problem, records: this.records };
      }
      if (reachedFrames !== count.frames) {
        const session = this.read(() => this.sql.byRef.get(ref))!;
        const orphan = this.firstOffChain(session, lastFrame);
        const problem = `${count.frames - reachedFrames} frame(s) of the session are not on its chain (inserted or relinked records), the first being frame ${orphan.id} from seq ${orphan.firstSeq}`;
        return { sessionId: session.session_id, seq: orphan.firstSeq, problem, records: this.records };
      }
    }
    return undefined;
  }
  /** The session's frame with the lowest `seq` among those (up to `lastFrame`) its intact chain does not reach. */
  private firstOffChain(session: VerifiedSessionRow, lastFrame: number): FrameLink {
    const head = session.closed_at !== null ? session.final_frame : session.head_frame;
    const onChain = new Set(this.frames.chain({ ref: session.ref, sessionId: session.session_id, headFrame: head }, this.read).ids);
    let first: FrameLink | undefined;
    for (const frame of this.read(() => this.frames.sessionFrames(session.ref))) {
      if (frame.id <= lastFrame && !onChain.has(frame.id) && (first === undefined || frame.firstSeq < first.firstSeq)) first = frame;
    }
    return first!;
  }
  private report(broken: Break | undefined): VerifyReport {
    if (broken === undefined) return { ok: true, sessions: this.sessions, records: this.records };
    const { records, ...firstBreak } = broken;
    return { ok: false, sessions: this.sessions, records, firstBreak };
  }
}
