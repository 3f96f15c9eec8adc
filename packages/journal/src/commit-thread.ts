import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { builtWorker } from "./built-worker.js";
import { FRAME_COLUMNS, type GroupWrites } from "./group-writes.js";

/** Slots of the shared state a commit thread and the writer both read (`Int32Array`). */
export const SLOT = {
  /** 0 while starting, 1 once its connection is open, -1 if it could not open it. */
  READY: 0,
  /** The number of the newest group it committed. */
  ACKED: 1,
  /** The number of the group whose commit failed; 0 if none did. */
  FAILED: 2,
  /** 1 once its connection is closed. */
  CLOSED: 3,
} as const;

/** What a commit thread is started with (its `workerData`). */
export interface CommitThreadData {
  readonly file: string;
  /** The tail log's two files (grouped durability), where posted groups' lines are read. */
  readonly tail: readonly [string, string] | undefined;
  readonly synchronous: "NORMAL" | "FULL";
  readonly state: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** A message from the commit thread: a committed group's number, or why it stopped. */
export type CommitThreadMessage = number | { readonly failed: number; readonly message: string };

/**
 * A group on its way to the commit thread. Its frame bodies never travel as strings: a
 * structured clone of them costs about 3.5 µs per KB here (measured), more than the
 * commit it saves. Under grouped durability every line of a posted group is already in
 * the tail log, and the thread reads it there (`lines`); without a tail log the bodies
 * travel as UTF-8 in a `SharedArrayBuffer` (`bodies`; each frame's body slot then holds
 * the byte offset where its body ends).
 */
export interface PostedGroup {
  readonly n: number;
  readonly writes: GroupWrites;
  /** The frame bodies (strict durability: no tail log). */
  readonly bodies?: SharedArrayBuffer;
  /** Where the group's lines are in the tail log, and each line's session (grouped durability). */
  readonly lines?: TailLines;
}

/**
 * A group's lines as the tail log holds them (see `TailLog.groupRange`): the commit
 * thread reads that byte range and builds each frame's body from the lines of its
 * session (`refs`, one per line, in order), so the writer neither joins nor copies them.
 */
export interface TailLines {
  readonly file: number;
  readonly start: number;
  readonly end: number;
  readonly refs: Int32Array;
}

/**
 * Moves the frame bodies of a group into shared memory (see {@link PostedGroup}): only
 * without a tail log (strict durability with `"always"`), where a group is one fsync's
 * worth of records.
 */
function packBodies(writes: GroupWrites): SharedArrayBuffer {
  const { frames } = writes;
  let bytes = 0;
  for (let index = FRAME_COLUMNS - 1; index < frames.length; index += FRAME_COLUMNS) bytes += Buffer.byteLength(frames[index] as string);
  const bodies = new SharedArrayBuffer(bytes);
  const buffer = Buffer.from(bodies);
  let offset = 0;
  for (let index = FRAME_COLUMNS - 1; index < frames.length; index += FRAME_COLUMNS) {
    offset += buffer.write(frames[index] as string, offset);
    frames[index] = offset;
  }
  return bodies;
}

/** The commit thread's side of {@link packBodies}: the frame bodies back as strings. */
export function unpackBodies(group: PostedGroup & { readonly bodies: SharedArrayBuffer }): GroupWrites {
  const { frames } = group.writes;
  const buffer = Buffer.from(group.bodies);
  let start = 0;
  for (let index = FRAME_COLUMNS - 1; index < frames.length; index += FRAME_COLUMNS) {
    const end = frames[index] as number;
    frames[index] = buffer.toString("utf8", start, end);
    start = end;
  }
  return group.writes;
}

/** How long a failed thread's message may trail the slot that says it failed. */
const MESSAGE_WAIT_MS = 1_000;

/** The built worker's file name, beside the module that starts it (see `builtWorker`). */
const WORKER_FILE = "journal-commit-worker.js";

/**
 * The writer's side of a commit thread: a worker thread with its own connection to the
 * journal file that runs the group commits (SQLite's statements, commit, fsync and
 * checkpoints), so the writer's thread only builds the groups. Groups are numbered and
 * committed in order; the thread publishes the newest committed number in shared memory
 * (for a synchronous wait with `Atomics.wait`) and posts it (for promises).
 */
export class CommitThread {
  private readonly shared: Int32Array;
  private exited = false;
  /** SQLite's message of a failed commit or start, once it arrived. */
  private why: string | undefined;

  private constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    state: SharedArrayBuffer,
    onChange: () => void,
  ) {
    this.shared = new Int32Array(state);
    worker.unref();
    port.unref();
    // An exit nobody asked for is reported like a message, so that whoever waits for a
    // commit learns it will not come (instead of waiting, with the port keeping the
    // process alive, forever).
    worker.on("exit", () => {
      this.exited = true;
      onChange();
    });
    // An error inside the thread is reported through the port (see the worker); this
    // keeps an unexpected one from becoming the process's uncaught exception.
    worker.on("error", () => undefined);
  }

  /**
   * Starts the thread for a journal file, or returns `undefined` when no built worker
   * file is found (a bundle that left it out): the writer then commits on its own thread.
   */
  static start(
    file: string,
    synchronous: "NORMAL" | "FULL",
    tail: readonly [string, string] | undefined,
    onMessage: () => void,
  ): CommitThread | undefined {
    const script = builtWorker(WORKER_FILE, import.meta.url);
    if (script === undefined) return undefined;
    const state = new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT);
    const { port1, port2 } = new MessageChannel();
    const data: CommitThreadData = { file, tail, synchronous, state, port: port2 };
    // No inherited `execArgv`: a parent started with `-e` or `--input-type` would pass
    // them on, and the thread would not run its own file.
    const worker = new Worker(script, { workerData: data, transferList: [port2], execArgv: [] });
    const thread = new CommitThread(worker, port1, state, onMessage);
    port1.on("message", (message: CommitThreadMessage) => {
      if (typeof message === "object") thread.why ??= message.message;
      onMessage();
    });
    port1.unref();
    return thread;
  }

  /** Whether the thread's connection is open: `undefined` while it starts. */
  get ready(): boolean | undefined {
    const ready = Atomics.load(this.shared, SLOT.READY);
    if (ready === 0 && !this.exited) return undefined;
    return ready === 1 && !this.exited;
  }

  /** Waits (blocking) until the thread has opened its connection or failed to; false if it failed or timed out. */
  waitReady(timeoutMs: number): boolean {
    const deadline = Date.now() + timeoutMs;
    while (Atomics.load(this.shared, SLOT.READY) === 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      Atomics.wait(this.shared, SLOT.READY, 0, Math.min(left, 50));
    }
    return this.ready === true;
  }

  /** The number of the newest committed group. */
  get acked(): number {
    return Atomics.load(this.shared, SLOT.ACKED);
  }

  /**
   * Hands a group to the thread: its lines in the tail log, or (no tail log) its bodies
   * packed in shared memory. Keeps the port referenced while groups are on their way.
   */
  post(n: number, writes: GroupWrites, lines: TailLines | undefined): void {
    const group: PostedGroup = lines === undefined ? { n, bodies: packBodies(writes), writes } : { n, lines, writes };
    this.port.ref();
    this.port.postMessage(group);
  }

  /** No group is on its way: the port may let the process exit. */
  idle(): void {
    this.port.unref();
  }

  /**
   * Waits (blocking) until group `n` is committed or the thread stops; false on timeout.
   * Waits in short slices so that a thread that died without a word is noticed.
   */
  waitFor(n: number, timeoutMs: number): boolean {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const acked = Atomics.load(this.shared, SLOT.ACKED);
      if (acked >= n || this.stopped() !== undefined) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      Atomics.wait(this.shared, SLOT.ACKED, acked, Math.min(left, 50));
    }
  }

  /**
   * Why the thread takes no more groups, or `undefined` while it works: a failed commit
   * or start (with SQLite's message), or an exit nobody asked for.
   */
  stopped(): string | undefined {
    const failed = Atomics.load(this.shared, SLOT.FAILED) !== 0 || Atomics.load(this.shared, SLOT.READY) === -1;
    if (failed) {
      // The thread sets the slot, then posts its message: unless the listener already has
      // it, it is on the port now or a moment later.
      const deadline = Date.now() + MESSAGE_WAIT_MS;
      while (this.why === undefined) {
        const next = receiveMessageOnPort(this.port);
        if (next !== undefined) {
          const message = next.message as CommitThreadMessage;
          if (typeof message === "object") this.why = message.message;
        } else if (Date.now() < deadline) Atomics.wait(this.shared, SLOT.CLOSED, 0, 1);
        else break;
      }
      return this.why ?? "the commit thread stopped";
    }
    if (this.exited) return "the commit thread exited";
    return undefined;
  }

  /**
   * Asks the thread to close its connection and waits (blocking, up to `timeoutMs`) until
   * it has, so no connection of this writer outlives `Journal.close`; then ends it.
   */
  close(timeoutMs: number): void {
    this.port.postMessage("close");
    const deadline = Date.now() + timeoutMs;
    while (Atomics.load(this.shared, SLOT.CLOSED) === 0 && !this.exited) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      Atomics.wait(this.shared, SLOT.CLOSED, 0, Math.min(left, 50));
    }
    this.port.close();
    void this.worker.terminate();
  }
}
