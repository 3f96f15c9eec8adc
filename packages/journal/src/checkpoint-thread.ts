import { Worker } from "node:worker_threads";
import { builtWorker } from "./built-worker.js";

/** Slots of the state a checkpoint thread and the thread that commits share (`Int32Array`). */
export const CHECKPOINT_SLOT = {
  /** Checkpoints asked for so far (the committing thread adds one and wakes the thread). */
  REQUESTS: 0,
  /** 1 once it is asked to stop. */
  STOP: 1,
  /** 1 once its connection is closed (or never opened). */
  CLOSED: 2,
  /** 1 once its code runs (its imports loaded). */
  STARTED: 3,
} as const;

/** How long `stop` waits for a thread whose code never began to run (it failed to load, or is still loading). */
const UNSTARTED_WAIT_MS = 200;

/** What a checkpoint thread is started with (its `workerData`). */
export interface CheckpointThreadData {
  readonly file: string;
  readonly synchronous: "NORMAL" | "FULL";
  readonly state: SharedArrayBuffer;
}

/**
 * Committed characters between two checkpoints asked of the checkpoint thread: about 4
 * MB of `-wal`, 256 pages. The committing connection's own checkpoint (every 2,500 pages,
 * see `writerPragmas`) then finds at most about this much left to copy.
 */
const CHECKPOINT_EVERY_CHARS = 4 << 20;

/** The built file, the same for every build of the journal (ESM, like the commit thread's). */
const WORKER_FILE = "journal-checkpoint-worker.js";

/**
 * WAL checkpoints off the thread that commits (the writer's, or the commit thread), for
 * the connection that commits there. A checkpoint copies committed pages from the `-wal`
 * into the database and spends most of its time waiting for the disk (two fsyncs): on
 * the committing thread it held every commit behind it for 100–130 ms a time, about two
 * thirds of the commit thread's time at native rates and most of the journal's cost per
 * MCP call. A *checkpoint thread* (a worker with its own connection) runs a PASSIVE
 * checkpoint, which never blocks a writer, every {@link CHECKPOINT_EVERY_CHARS}
 * characters committed. It starts with the first request, so a journal that commits
 * less than that never starts it. The committing connection keeps its own checkpoint,
 * which restarts the `-wal` from its beginning once everything in it is copied: it now
 * finds little left to copy. Without the built file (a bundle that did not ship it), the
 * committing connection checkpoints alone, as before.
 */
export class Checkpoints {
  private worker: Worker | undefined;
  private shared: Int32Array | undefined;
  private chars = 0;
  /** Starting failed, or the owner stopped it: no more threads. */
  private over = false;

  /** `here`: the `import.meta.url` of the calling module, beside which the built file lies. */
  constructor(
    private readonly file: string,
    private readonly synchronous: "NORMAL" | "FULL",
    private readonly here: string,
  ) {}

  /** Counts characters just committed, and asks for a checkpoint every {@link CHECKPOINT_EVERY_CHARS}. */
  committed(chars: number): void {
    this.chars += chars;
    if (this.chars < CHECKPOINT_EVERY_CHARS || this.over) return;
    this.chars = 0;
    if (this.shared === undefined && !this.start()) return;
    if (Atomics.load(this.shared!, CHECKPOINT_SLOT.CLOSED) !== 0) return;
    Atomics.add(this.shared!, CHECKPOINT_SLOT.REQUESTS, 1);
    Atomics.notify(this.shared!, CHECKPOINT_SLOT.REQUESTS);
  }

  /**
   * Asks the thread, if it runs, to stop, and returns at once: it closes its connection
   * when a checkpoint it is running ends (or before opening one, if its code is still
   * loading), and exits. No checkpoint is asked of it any more. For the hand-over to the
   * commit thread, which happens under load: waiting there for the thread to close held
   * the writer's event loop for up to a whole checkpoint (200 ms seen for a thread still
   * loading). Two connections checkpointing at once is safe in SQLite (the second finds
   * the checkpoint lock taken and skips). `stop` still waits for it, at close.
   */
  retire(): void {
    this.over = true;
    const shared = this.shared;
    if (shared === undefined) return;
    Atomics.store(shared, CHECKPOINT_SLOT.STOP, 1);
    Atomics.add(shared, CHECKPOINT_SLOT.REQUESTS, 1);
    Atomics.notify(shared, CHECKPOINT_SLOT.REQUESTS);
  }

  /** Whether a thread was started and has not closed its connection yet (for tests). */
  get running(): boolean {
    return this.shared !== undefined && Atomics.load(this.shared, CHECKPOINT_SLOT.CLOSED) === 0;
  }

  /** Stops the thread, if it runs, and waits (blocking, up to `timeoutMs`) until its connection is closed. */
  stop(timeoutMs: number): void {
    this.retire();
    const shared = this.shared;
    if (shared === undefined) return;
    // A thread still checkpointing finishes first (a blocking wait: its exit event
    // cannot run meanwhile, so only a thread that already ended has said so above). One
    // whose code never ran is waited for briefly: a file that failed to load never
    // closes anything, and one still loading sees the stop before it opens a connection.
    const started = Atomics.load(shared, CHECKPOINT_SLOT.STARTED) === 1;
    Atomics.wait(shared, CHECKPOINT_SLOT.CLOSED, 0, started ? timeoutMs : UNSTARTED_WAIT_MS);
    void this.worker?.terminate();
    this.worker = undefined;
    this.shared = undefined;
  }

  private start(): boolean {
    const script = builtWorker(WORKER_FILE, this.here);
    if (script === undefined) {
      this.over = true;
      return false;
    }
    const state = new SharedArrayBuffer(4 * Object.keys(CHECKPOINT_SLOT).length);
    const data: CheckpointThreadData = { file: this.file, synchronous: this.synchronous, state };
    try {
      // No inherited `execArgv` (see `CommitThread.start`).
      this.worker = new Worker(script, { workerData: data, execArgv: [] });
    } catch {
      this.over = true;
      return false;
    }
    this.worker.unref();
    const shared = new Int32Array(state);
    // A thread that ended without closing (its file failed to load, an error, terminated)
    // is given up: `stop` must not wait for it, and the committing connection
    // checkpoints alone. A failure only loses the help.
    const ended = () => {
      this.over = true;
      Atomics.store(shared, CHECKPOINT_SLOT.CLOSED, 1);
    };
    this.worker.on("error", ended);
    this.worker.on("exit", ended);
    this.shared = shared;
    return true;
  }
}
