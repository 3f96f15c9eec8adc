import type Database from "better-sqlite3";
import { GENESIS_HASH, HASH_LENGTH } from "../records/chain.js";
import { damagedError, describeCell } from "./damage.js";

/** One stored record as read back, with the link it continues. */
export interface StoredRecord {
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
  readonly data: string;
}

/** One frame's place in its session: what the walk from a session's first frame reads. */
export interface FrameLink {
  readonly id: number;
  readonly firstSeq: number;
  readonly prevFrame: number | null;
}

/** A session's chain read from its first frame forward. */
export interface ChainStart {
  readonly ids: number[];
  readonly next?: FrameLink;
}

/** Where a session's chain stands: its head frame (and the session's id, for messages). */
export interface ChainHead {
  readonly ref: number;
  readonly sessionId: string;
  readonly headFrame: number | null;
}

/** A frame's cells as stored, unchecked: what `verify()` reads (a damaged file may hold any type in them). */
export interface RawFrame {
  readonly firstSeq: unknown;
  readonly body: unknown;
}

/** Runs one read; `verify()` passes one that bounds its read transactions (see `ReadWindow`). */
export type ReadStep = <T>(read: () => T) => T;

const direct: ReadStep = (read) => read();

/** Splits a frame line into its hash and data; `undefined` when the line is not one. */
export function parseFrameLine(line: string): { hash: string; data: string } | undefined {
  if (line.length < HASH_LENGTH + 1 || line.charCodeAt(HASH_LENGTH) !== 32) return undefined;
  return { hash: line.slice(0, HASH_LENGTH), data: line.slice(HASH_LENGTH + 1) };
}
/** Reads a session's frames by following `prev_frame` links back from its head. */
export class FrameReader {
  private readonly link;
  private readonly body;
  private readonly back;
  private readonly links;

  constructor(db: Database.Database) {
    this.link = db.prepare<[number], { session_ref: number; prev_frame: number | null }>("SELECT session_ref, prev_frame FROM frames WHERE id = ?");
    this.body = db.prepare<[number], { first_seq: unknown; body: unknown }>("SELECT first_seq, body FROM frames WHERE id = ?");
    this.back = db.prepare<[number, number], { prev_frame: number | null; body: unknown }>(
      "SELECT prev_frame, body FROM frames WHERE id = ? AND session_ref = ?",
    );
    this.links = db.prepare<[number], FrameLink>("SELECT id, first_seq AS firstSeq, prev_frame AS prevFrame FROM frames WHERE session_ref = ? ORDER BY id");
  }
  /** The frame ids of a session's chain, oldest first, and what stopped the walk early (a missing frame, a link to another session or forward in time), if anything. */
  chain(head: ChainHead, read: ReadStep = direct): { ids: number[]; problem?: string } {
    const ids: number[] = [];
    let id = head.headFrame;
    while (id !== null) {
      const at = id;
      const row = read(() => this.link.get(at));
      if (row === undefined) return { ids: ids.reverse(), problem: `missing record: frame ${id} of the chain is gone` };
      if (row.session_ref !== head.ref) return { ids: ids.reverse(), problem: `broken link: frame ${id} belongs to another session (ref ${row.session_ref})` };
      ids.push(id);
      if (row.prev_frame !== null && row.prev_frame >= id)
        return { ids: ids.reverse(), problem: `broken link: frame ${id} links forward to frame ${row.prev_frame}` };
      id = row.prev_frame;
    }
    return { ids: ids.reverse() };
  }
  /**
   * The session's chain from its first frame forward, for a chain the walk back from its head could not finish (a frame gone, a link to another session): the frames
   * before the break, and the frame the chain resumes at.
   */
  fromStart(ref: number): ChainStart {
    const frames = this.sessionFrames(ref);
    let first: number | undefined;
    const successor = new Map<number, number>();
    for (const frame of frames) {
      if (frame.prevFrame === null) first ??= frame.id;
      // The lowest id wins when two frames claim one predecessor (an inserted frame).
      else if (frame.prevFrame < frame.id && !successor.has(frame.prevFrame)) successor.set(frame.prevFrame, frame.id);
    }
    const ids: number[] = [];
    for (let id = first; id !== undefined; id = successor.get(id)) ids.push(id);
    const last = ids.at(-1) ?? 0;
    const next = frames.find((frame) => frame.id > last);
    return next === undefined ? { ids } : { ids, next };
  }
  /** Every frame of the session, by id (a scan of the table). */
  sessionFrames(ref: number): FrameLink[] {
    return this.links.all(ref);
  }
  /** The session a frame belongs to and its link, or `undefined` when no such frame exists. */
  linkOf(id: number): { sessionRef: number; prevFrame: number | null } | undefined {
    const row = this.link.get(id);
    return row === undefined ? undefined : { sessionRef: row.session_ref, prevFrame: row.prev_frame };
  }
  /** One frame's first `seq` and body as stored, or `undefined` when no such frame exists. */
  rawFrame(id: number): RawFrame | undefined {
    const row = this.body.get(id);
    return row === undefined ? undefined : { firstSeq: row.first_seq, body: row.body };
  }
  /** The session's records in chain order, a frame at a time (frames are immutable once written, so a writer committing meanwhile cannot tear the walk). */
  *records(head: ChainHead): Generator<StoredRecord> {
    const chain = this.chain(head);
    const ids = chain.problem === undefined ? chain.ids : this.fromStart(head.ref).ids;
    let prevHash = GENESIS_HASH;
    let seq = 1;
    for (const id of ids) {
      const frame = this.rawFrame(id);
      if (frame === undefined || frame.firstSeq !== seq) return;
      for (const line of linesOf(frame.body, id, head.sessionId)) {
        const parsed = parseFrameLine(line);
        if (parsed === undefined) return;
        yield { seq, prevHash, hash: parsed.hash, data: parsed.data };
        prevHash = parsed.hash;
        seq += 1;
      }
    }
  }
  /** The data of the session's records, newest first: what recovery reads to describe the calls a crash left open, which are among the newest. */
  *newestFirst(head: ChainHead): Generator<string> {
    let id = head.headFrame;
    while (id !== null) {
      const row = this.back.get(id, head.ref);
      if (row === undefined) return;
      const lines = linesOf(row.body, id, head.sessionId);
      for (let index = lines.length - 1; index >= 0; index -= 1) {
        const parsed = parseFrameLine(lines[index]!);
        if (parsed === undefined) return;
        yield parsed.data;
      }
      if (row.prev_frame !== null && row.prev_frame >= id) return;
      id = row.prev_frame;
    }
  }
}
/** A frame body's lines; `JOURNAL_DAMAGED` when the body is not the text the journal writes. */
function linesOf(body: unknown, id: number, sessionId: string): string[] {
  if (typeof body !== "string") throw damagedError(sessionId, `frame ${id} holds ${describeCell(body)} where the journal writes its records as text`);
  return body.split("\n");
}
