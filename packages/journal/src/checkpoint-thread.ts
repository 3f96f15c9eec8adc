import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

/** Slots of the state a checkpoint thread and its commit thread share (`Int32Array`). */
export const CHECKPOINT_SLOT = {
  /** Checkpoints asked for so far (the commit thread adds one and wakes the thread). */
  REQUESTS: 0,
  /** 1 once the commit thread asked it to stop. */
  STOP: 1,
  /** 1 once its connection is closed (or never opened). */
  CLOSED: 2,
} as const;

/** What a checkpoint thread is started with (its `workerData`). */
export interface CheckpointThreadData {
  readonly file: string;
  readonly synchronous: "NORMAL" | "FULL";
  readonly state: SharedArrayBuffer;
}

/**
 * Committed bytes between two checkpoints asked of the checkpoint thread: about 256 WAL
 * pages. The commit connection's own checkpoint (every 2,500 pages, see `writerPragmas`)
 * then finds at most this much left to copy.
 */
const CHECKPOINT_EVERY_BYTES = 4 << 20;

/**
 * The commit thread's helper for WAL checkpoints: a worker thread with its own
 * connection that copies committed pages from the `-wal` into the database (a PASSIVE
 * checkpoint, which never blocks a writer) every few megabytes the commit thread
 * commits. A checkpoint spends most of its time waiting for the disk (two fsyncs);
 * on the commit thread it held every group behind it for 100–130 ms a time, about two
 * thirds of the thread's time at native rates. The commit connection keeps its own
 * checkpoint, which restarts the `-wal` from its beginning once everything in it is
 * copied: with this helper it has little left to copy. Without the helper's built file
 * (a bundle that did not ship it), the commit connection checkpoints alone, as before.
 */
export class CheckpointThread {
  private readonly shared: Int32Array;
  private bytes = 0;

  private constructor(
    private readonly worker: Worker,
    state: SharedArrayBuffer,
  ) {
    this.shared = new Int32Array(state);
    worker.unref();
    // A failure inside it only loses the help: the commit connection still checkpoints.
    worker.on("error", () => undefined);
  }

  /** Starts the helper, or returns `undefined` when its built file is not there. */
  static start(file: string, synchronous: "NORMAL" | "FULL", here: string): CheckpointThread | undefined {
    // The same build as the commit thread's own file (`.js` or `.cjs`), beside it.
    const script = fileURLToPath(new URL(`./journal-checkpoint-worker${here.endsWith(".cjs") ? ".cjs" : ".js"}`, here));
    if (!existsSync(script)) return undefined;
    const state = new SharedArrayBuffer(4 * Object.keys(CHECKPOINT_SLOT).length);
    const data: CheckpointThreadData = { file, synchronous, state };
    return new CheckpointThread(new Worker(script, { workerData: data, execArgv: [] }), state);
  }

  /** Counts bytes just committed, and asks for a checkpoint every {@link CHECKPOINT_EVERY_BYTES}. */
  committed(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes < CHECKPOINT_EVERY_BYTES) return;
    this.bytes = 0;
    Atomics.add(this.shared, CHECKPOINT_SLOT.REQUESTS, 1);
    Atomics.notify(this.shared, CHECKPOINT_SLOT.REQUESTS);
  }

  /** Stops it and waits (blocking, up to `timeoutMs`) until its connection is closed. */
  stop(timeoutMs: number): void {
    Atomics.store(this.shared, CHECKPOINT_SLOT.STOP, 1);
    Atomics.add(this.shared, CHECKPOINT_SLOT.REQUESTS, 1);
    Atomics.notify(this.shared, CHECKPOINT_SLOT.REQUESTS);
    Atomics.wait(this.shared, CHECKPOINT_SLOT.CLOSED, 0, timeoutMs);
    void this.worker.terminate();
  }
}
