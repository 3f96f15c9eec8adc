// The commit thread of a journal writer (see `commit-thread.ts`): opens its own
// connection to the journal file and commits the groups the writer posts, in order.
// Built as its own file, `journal-commit-worker.js`; a host that bundles the journal
// ships it beside its bundle (see the README, "Commit thread").
import { closeSync, openSync } from "node:fs";
import { workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { chainLines } from "./chain.js";
import { Checkpoints } from "./checkpoint-thread.js";
import { type CommitThreadData, type CommitThreadMessage, type PostedGroup, SLOT, type TailLines, unpackBodies } from "./commit-thread.js";
import { bodyChars, FRAME_COLUMNS, GroupStatements, type GroupWrites, HEAD_COLUMNS, writerPragmas } from "./group-writes.js";
import { readRecordLines } from "./tail-lines.js";

const { file, tail, synchronous, state, port } = workerData as CommitThreadData;
const shared = new Int32Array(state);

function publish(slot: number, value: number): void {
  Atomics.store(shared, slot, value);
  Atomics.notify(shared, slot);
}

function report(failed: number, error: unknown): void {
  const message: CommitThreadMessage = { failed, message: error instanceof Error ? error.message : String(error) };
  port.postMessage(message);
}

/**
 * The chain head of every open session whose records this thread hashed or took, by ref:
 * the writer queues records without their hash while this thread runs (see
 * `GroupCommit.hashOnThread`), and tells a session's head (`seeds`) when this thread may
 * not know it.
 */
const heads = new Map<number, string>();
/** Where a head row's hash is among its `HEAD_COLUMNS`. */
const HEAD_HASH = 3;

/** The tail log's files, opened for reading on first use. */
const tailFds: (number | undefined)[] = [undefined, undefined];
let readBuffer = Buffer.alloc(0);

/**
 * Fills in a group's frame bodies from its lines in the tail log: the byte range the
 * writer wrote them to, one session ref per line. Throws if the range does not hold
 * exactly that many lines (the journal then fails rather than store wrong frames).
 */
function bodiesFromTail(writes: GroupWrites, lines: TailLines): GroupWrites {
  const fd = (tailFds[lines.file] ??= openSync(tail![lines.file]!, "r"));
  const length = lines.end - lines.start;
  if (readBuffer.length < length) readBuffer = Buffer.alloc(Math.max(length, readBuffer.length * 2, 1 << 20));
  const all = readRecordLines(fd, lines.start, length, readBuffer);
  if (all === undefined || all.length !== lines.refs.length) {
    throw new Error(`the tail log's lines of this group do not match it (${all?.length ?? "no complete"} lines in its ${length} bytes, expected ${lines.refs.length})`);
  }
  const bySession = new Map<number, string[]>();
  for (let index = 0; index < lines.refs.length; index += 1) {
    const ref = lines.refs[index]!;
    const own = bySession.get(ref);
    if (own === undefined) bySession.set(ref, [all[index]!]);
    else own.push(all[index]!);
  }
  // A busy session has several frames in a group, consecutive (see `GroupCommit`): each
  // holds its lines up to the next one's first `seq`, the last one the rest.
  const { frames } = writes;
  let taken = 0;
  for (let index = 0; index < frames.length; index += FRAME_COLUMNS) {
    const ref = frames[index + 1] as number;
    const own = bySession.get(ref) ?? [];
    const next = index + FRAME_COLUMNS;
    const continued = next < frames.length && frames[next + 1] === ref;
    const count = continued ? (frames[next + 2] as number) - (frames[index + 2] as number) : own.length - taken;
    frames[index + FRAME_COLUMNS - 1] = hashed(ref, taken === 0 && !continued ? own : own.slice(taken, taken + count)).join("\n");
    taken = continued ? taken + count : 0;
  }
  return writes;
}

/**
 * A session's lines as frame lines, in order: a line queued without its hash is hashed
 * onto the session's chain here; a frame line moves the chain's head to its hash.
 * Throws if the head of a session with an unhashed line is unknown.
 */
function hashed(ref: number, lines: string[]): string[] {
  const head = chainLines(heads.get(ref), lines, `session ref ${ref}`);
  if (head !== undefined) heads.set(ref, head);
  return lines;
}

/** Takes the heads the writer told this thread (the group's seeds), before its frames are built. */
function takeSeeds(writes: GroupWrites): void {
  const { seeds } = writes;
  for (let index = 0; index < seeds.length; index += 2) heads.set(seeds[index] as number, seeds[index + 1] as string);
}

/**
 * Fills in, once the group's frames are built, the hashes the writer left to this
 * thread: its head rows' and a closing session's final hash. A session that closes is
 * forgotten.
 */
function fillHeads(writes: GroupWrites): GroupWrites {
  const rows = writes.heads;
  for (let index = 0; index < rows.length; index += HEAD_COLUMNS) {
    if (rows[index + HEAD_HASH] === null) rows[index + HEAD_HASH] = headOf(rows[index] as number);
  }
  const { ops } = writes;
  for (let index = 0; index < ops.length; index += 1) {
    const op = ops[index]!;
    if (op[0] === "close" && op[3] === null) ops[index] = ["close", op[1], op[2], headOf(op[6]), op[4], op[5], op[6]];
  }
  // A closed session's head row is dropped (before its closing row is written): it takes no more records.
  for (const op of ops) if (op[0] === "drop") heads.delete(op[1]);
  return writes;
}

function headOf(ref: number): string {
  const head = heads.get(ref);
  if (head === undefined) throw new Error(`the chain head of session ref ${ref} was never given`);
  return head;
}

let db: Database.Database | undefined;
let statements: GroupStatements | undefined;
/** Checkpoints off this thread (see `checkpoint-thread.ts`). */
const checkpoints = new Checkpoints(file, synchronous, import.meta.url);
/** How long closing waits for the checkpoint thread to close its connection (a checkpoint may be under way). */
const CHECKPOINT_CLOSE_MS = 5_000;
try {
  db = new Database(file, { fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  for (const pragma of writerPragmas(synchronous)) db.pragma(pragma);
  statements = new GroupStatements(db);
  publish(SLOT.READY, 1);
} catch (error) {
  // The slot first, then the message: whoever the message wakes must find the slot set.
  publish(SLOT.READY, -1);
  report(0, error);
}

port.on("message", (message: PostedGroup | "close") => {
  if (message === "close") {
    try {
      checkpoints.stop(CHECKPOINT_CLOSE_MS);
      db?.close();
      for (const fd of tailFds) if (fd !== undefined) closeSync(fd);
    } finally {
      port.close();
      publish(SLOT.CLOSED, 1);
    }
    return;
  }
  // After a failed commit the chain in the file is behind the writer's: take no more.
  if (statements === undefined || Atomics.load(shared, SLOT.FAILED) !== 0) return;
  try {
    takeSeeds(message.writes);
    const writes = fillHeads(
      message.lines !== undefined ? bodiesFromTail(message.writes, message.lines) : unpackBodies(message as PostedGroup & { bodies: SharedArrayBuffer }),
    );
    statements.apply(writes);
    checkpoints.committed(bodyChars(writes));
  } catch (error) {
    // The slot first, then the message: whoever the message wakes must find the slot set.
    publish(SLOT.FAILED, message.n);
    Atomics.notify(shared, SLOT.ACKED);
    report(message.n, error);
    return;
  }
  publish(SLOT.ACKED, message.n);
  port.postMessage(message.n satisfies CommitThreadMessage);
});
