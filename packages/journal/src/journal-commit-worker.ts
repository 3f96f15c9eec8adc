// The commit thread of a journal writer (see `commit-thread.ts`): opens its own
// connection to the journal file and commits the groups the writer posts, in order.
// Built as its own file, `journal-commit-worker.js`; a host that bundles the journal
// ships it beside its bundle (see the README, "Commit thread").
import { closeSync, openSync, readSync } from "node:fs";
import { workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { type CommitThreadData, type CommitThreadMessage, type PostedGroup, SLOT, type TailLines, unpackBodies } from "./commit-thread.js";
import { FRAME_COLUMNS, GroupStatements, type GroupWrites, writerPragmas } from "./group-writes.js";
import { decodeLines } from "./tail-lines.js";

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
  let read = 0;
  while (read < length) {
    const got = readSync(fd, readBuffer, read, length - read, lines.start + read);
    if (got === 0) break;
    read += got;
  }
  const all = decodeLines(readBuffer, read);
  if (read !== length || all === undefined || all.length !== lines.refs.length) {
    throw new Error(`the tail log's lines of this group do not match it (${all?.length ?? "no complete"} lines in ${read} bytes, expected ${lines.refs.length} in ${length})`);
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
    frames[index + FRAME_COLUMNS - 1] = (taken === 0 && !continued ? own : own.slice(taken, taken + count)).join("\n");
    taken = continued ? taken + count : 0;
  }
  return writes;
}

let db: Database.Database | undefined;
let statements: GroupStatements | undefined;
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
    const writes =
      message.lines !== undefined ? bodiesFromTail(message.writes, message.lines) : unpackBodies(message as PostedGroup & { bodies: SharedArrayBuffer });
    statements.apply(writes);
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
