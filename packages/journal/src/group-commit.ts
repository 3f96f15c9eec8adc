import { statSync } from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { chainLines } from "./chain.js";
import { Checkpoints } from "./checkpoint-thread.js";
import { CommitThread } from "./commit-thread.js";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import { bodyChars, type GroupOp, GroupStatements, type GroupWrites } from "./group-writes.js";
import { MAX_PIECE } from "./tail-lines.js";
import { openCallsJson, type SessionState } from "./live-state.js";
import type { TailLog } from "./tail-log.js";

type Waiter = { resolve: () => void; reject: (error: unknown) => void };

/**
 * Queued records at which the group commits at once, before it takes the next one,
 * instead of waiting for its timer: a caller that never yields (a tight loop of
 * microtasks) still gets bounded memory and a bounded tail log (see also
 * {@link MAX_QUEUED_CHARS}).
 */
const MAX_QUEUED_LINES = 512;
/**
 * The same bound while the commit thread takes the groups (grouped durability): a group
 * costs both threads something whatever its size (a message each way, a head row and a
 * frame per session it touches, a transaction, the `-wal` pages it rewrites), and at the
 * rates that start the thread groups end at this bound, not at the timer. Four times
 * {@link MAX_QUEUED_LINES}: fewer, larger groups lower the commit thread's CPU per call
 * and raise the calls/s of busy writers; a larger bound gains nothing more. The writer
 * then holds up to 2,048 queued records (about 800 KB of a native call's records;
 * {@link MAX_QUEUED_CHARS} bounds large ones), and the thread reads as much back at a time.
 */
export const MAX_QUEUED_LINES_ON_THREAD = 2048;
/**
 * Queued characters at which the group commits at once, whatever its record count: a
 * record can be large (a call's result up to 256 KB, E3), and 2,048 such records from a
 * caller that never yields would hold half a gigabyte on the writer's thread, and as much
 * again in the commit thread's read buffer. Typical groups are far below it (2,048
 * records of a native call are about 800,000 characters).
 */
export const MAX_QUEUED_CHARS = 4 * 1024 * 1024;
/**
 * With a tail log, how long queued records wait for their commit at most (unless a flush
 * or the queue's size asks sooner). Readers in other processes see records that much later.
 * A commit has a fixed cost (the transaction, the WAL write and its locks) that a small
 * group pays alone: at MCP call rates (~10,000 calls/s, groups of ~100 calls at 10 ms)
 * a longer interval shares that cost among more records and lowers the host's CPU per
 * call (see docs/journal-design.md). At native rates the record bound ends groups first.
 */
const TAIL_COMMIT_INTERVAL_MS = 10;

/** How often, at most, a writer checks that its file is still at its path (see `checkFile`). */
const FILE_CHECK_INTERVAL_MS = 200;
/** Tail-log writes per turn of the event loop that happen as soon as the microtask queue drains (see `whenDurable`). */
const TICK_WRITES_PER_TURN = 8;
/**
 * Under `"auto"`, the commit thread starts once the work it would take off the writer's
 * thread (building each group: hashing its records and writing its frames; then
 * committing it) took at least this share of the writer's time, while the writer's event
 * loop was busy (see {@link THREAD_AFTER_LOOP_BUSY}), in two of the last three
 * {@link SHARE_WINDOW_MS} windows: one window alone (a pause, a burst) starts nothing.
 * The thread pays where the writer's thread is what limits the rate: with 32 native
 * sessions (~150,000 records/s) or 32 journal writers it wins (+25–50 % calls/s). Where
 * the writer waits on something else, it only adds hand-overs: with 32 MCP calls in
 * flight (~50,000 records/s, the loop idle a quarter of the time waiting for the server)
 * a governed call took 2–6 µs more CPU with the thread, for the same calls/s. Group size
 * cannot tell these apart (a busy event loop makes large groups at any rate), nor can the
 * share alone on two cores (the server's process and the checkpoints slow the writer's
 * commits down, so MCP windows reach 15–30 % too); the share and an event loop with no
 * time to spare can, whatever the machine's speed. Building is counted with committing,
 * and two windows of three suffice, because under 32 native sessions the commit alone
 * swings from window to window around the share: counting it alone, or asking for three
 * windows in a row, would leave the thread unstarted where it pays.
 */
export const THREAD_AFTER_COMMIT_SHARE = 0.2;
const SHARE_WINDOW_MS = 100;
/**
 * Under `"auto"`, the least share of a window the writer's event loop spends running
 * (not waiting for I/O or timers) for the window to count as busy. 32 native sessions
 * keep it at 100 %; 32 MCP calls in flight at 65–80 %.
 */
const THREAD_AFTER_LOOP_BUSY = 0.9;
/**
 * Records on their way to the commit thread at most; a group that would pass it waits
 * for the oldest first (back-pressure). Enough to ride out a checkpoint on the thread
 * (a few hundred milliseconds for a full WAL) without the writer waiting: about 16 MB.
 */
const MAX_IN_FLIGHT_LINES = 65_536;
/**
 * Characters of records on their way to the commit thread at most, for the same
 * back-pressure: with large records (a call's result may be 256 KB) the record bound alone
 * would let a writer outrunning the thread put gigabytes on their way (in the tail log,
 * or, under strict durability, in the shared memory the bodies travel in). About two and
 * a half times what 65,536 records of native calls hold (about 25 million characters),
 * so that typical loads meet the record bound first.
 */
export const MAX_IN_FLIGHT_CHARS = 64 * 1024 * 1024;
/** How long a synchronous wait for the commit thread lasts before the journal gives up on it. */
const THREAD_TIMEOUT_MS = 30_000;
/** How long closing waits for the commit thread to close its connection (it has nothing left to commit). */
const CLOSE_TIMEOUT_MS = 5_000;

/**
 * Where group commits run: `"auto"` (default) commits on the writer's thread until the
 * writer is busy (building and committing groups take a fifth of its time, in two of three 100 ms windows), then starts a commit thread, under grouped
 * durability only; `"always"` starts it when the journal opens; `"never"` never does.
 */
export type CommitThreadMode = "auto" | "always" | "never";

/** A group handed to the commit thread and not yet acknowledged. */
interface InFlight {
  readonly n: number;
  readonly records: number;
  readonly chars: number;
  readonly after: (() => void)[];
  readonly waiters: Waiter[];
}

/**
 * Group commit: records are queued synchronously and committed together in one
 * transaction, so concurrent calls share one commit (and, in strict mode, one fsync)
 * instead of paying one each. A commit writes one frame per session it touches (its
 * queued records) and that session's head row; see `frames.ts`.
 *
 * A group is built here as plain data (`GroupWrites`) and committed either on this
 * thread's connection or, once the writer is busy, by the commit thread (see
 * `commit-thread.ts`), which takes SQLite's statements, commit, fsync and checkpoints off
 * the writer's thread. Groups are committed in order either way; a synchronous
 * `commitNow` waits for the thread.
 *
 * A failed commit loses its whole group. The in-memory chain heads then no longer match
 * the file, so the journal refuses every later write with `JOURNAL_WRITE_FAILED`
 * rather than write a broken chain; reopening the file restores a consistent state
 * (the tail log still holds what was lost).
 */
export class GroupCommit {
  /** Sessions with queued records, in the order they were first touched. */
  private touched: SessionState[] = [];
  /** Other writes of the group (a session's row when it opens or closes), built when the group is. */
  private queue: (() => GroupOp)[] = [];
  /** The group's `seeds` (see `GroupWrites`): `[ref, head]` pairs. */
  private seeds: (string | number)[] = [];
  /**
   * Whether records are queued without their hash, for the commit thread to hash (see
   * {@link hashOnThread}).
   */
  private threadHashes = false;
  /**
   * The chain head the file holds for a live session (`LiveState.storedHead`): set by the
   * journal once its state exists.
   */
  storedHead: ((session: SessionState) => string) | undefined;
  private afterCommit: (() => void)[] = [];
  private waiters: Waiter[] = [];
  private immediate = false;
  private timer: NodeJS.Timeout | undefined;
  private failure: Error | undefined;
  private nextFrame: number;
  /** Lines queued since the tail log was last written (grouped durability). */
  private unlogged: string[] = [];
  /** The session ref of every line of the group being queued, in tail-log order (grouped durability). */
  private lineRefs: number[] = [];
  /** The tail-log write the starts queued so far wait for. */
  private tailBatch: Promise<void> | undefined;
  /** Tail-log writes this turn of the event loop (see {@link whenDurable}). */
  private tickWrites = 0;
  private queuedLines = 0;
  /** The characters of the queued records (see {@link MAX_QUEUED_CHARS}). */
  private queuedChars = 0;
  /** Whether a queued line is kept as its length only (see {@link enqueueRecord}). */
  private lengthsQueued = false;
  private tail: TailLog | undefined;
  private readonly statements: GroupStatements;
  private thread: CommitThread | undefined;
  /** Checkpoints for the commits on this thread (the commit thread has its own). */
  private readonly checkpoints: Checkpoints;
  /** Groups posted to the commit thread, oldest first, and the number of the newest. */
  private inFlight: InFlight[] = [];
  private posted = 0;
  private linesInFlight = 0;
  private charsInFlight = 0;
  /**
   * The current window (see {@link mostlyBusy}): its start, the event loop's figures then,
   * and its time spent building and committing; then the last three windows, one bit
   * each (1: busy), newest lowest.
   */
  private windowStart = performance.now();
  private windowLoop = performance.eventLoopUtilization();
  private windowWorkMs = 0;
  private busyWindows = 0;
  /** The group whose commit frees the tail log's other file. */
  private switchedUntil: number | undefined;
  /** The opened file's identity, and when it was last checked against the path (see {@link checkFile}). */
  private readonly filePath: string;
  private readonly fileIdentity: { readonly dev: number; readonly ino: number };
  private fileCheckedAt = Date.now();

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    private readonly synchronous: "NORMAL" | "FULL",
    private threadMode: CommitThreadMode,
    /** Under `"auto"`, the share of the writer's time in commits that starts the thread. */
    private readonly threadAfterShare = THREAD_AFTER_COMMIT_SHARE,
  ) {
    this.statements = new GroupStatements(db);
    // The journal is the file's one writer, so frame ids are assigned here, which lets a
    // group insert its frames in a few multi-row statements.
    this.nextFrame = ((db.prepare("SELECT max(id) AS id FROM frames").get() as { id: number | null }).id ?? 0) + 1;
    // Absolute: a host that changes its working folder later must not look elsewhere.
    this.filePath = path.resolve(file);
    const { dev, ino } = statSync(this.filePath);
    this.fileIdentity = { dev, ino };
    this.checkpoints = new Checkpoints(this.filePath, synchronous, import.meta.url);
  }

  /**
   * Where commits run now: on this thread, on the commit thread, or on this thread while
   * the commit thread starts.
   */
  get where(): "inline" | "starting" | "thread" {
    if (this.thread === undefined) return "inline";
    return this.thread.ready === true ? "thread" : "starting";
  }

  /**
   * Starts the commit thread now and waits until its connection is open (`"always"`).
   * Throws `JOURNAL_OPEN_FAILED` if it cannot start.
   */
  startThreadNow(): void {
    this.startThread();
    if (this.thread?.waitReady(THREAD_TIMEOUT_MS) !== true) {
      const why = this.thread?.stopped() ?? "no built journal-commit-worker.js was found beside the journal's code";
      this.thread?.close(CLOSE_TIMEOUT_MS);
      this.thread = undefined;
      throw journalError(
        JOURNAL_ERRORS.OPEN_FAILED,
        `journal ${JSON.stringify(this.file)}: the commit thread did not start (${why}); open it with commitThread "auto" or "never"`,
        { path: this.file },
      );
    }
  }

  /**
   * Runs a lookup inside a transaction of the writer's connection, opening it if needed. A
   * statement outside a transaction pays for its own read transaction (~12 µs in WAL mode,
   * most of a call's budget); inside one it costs about a microsecond. The transaction ends
   * with the group's commit (or, with a commit thread, when a group is posted or committed,
   * so the connection's reads never lag far behind the file).
   */
  lookup<T>(read: () => T): T {
    if (!this.db.inTransaction) {
      this.statements.beginRead();
      this.schedule();
    }
    return read();
  }

  /**
   * Whether the writer queues records without hashing them: the commit thread runs and
   * reads each group's lines from the tail log, and hashes them onto their chains as it
   * builds the frames (a SHA-256 a record, about a sixth of the writer's time at native
   * rates, off the writer's thread). Until the thread is ready, and without a tail log,
   * records are hashed when they are queued.
   */
  get hashOnThread(): boolean {
    return this.threadHashes;
  }

  /**
   * The session's chain head, for a record hashed on this thread. After records of the
   * session were queued unhashed (the commit thread then stopped, with everything posted
   * committed), it is taken from the file and the queued lines are hashed onto it.
   */
  headOf(session: SessionState): string {
    if (session.head === undefined || session.unhashed) this.hashPending(session);
    return session.head!;
  }

  /** Throws the failure of an earlier commit, if any. */
  assertHealthy(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /**
   * Queues one record line of a session (its `seq` is `session.seq + 1`), with the other
   * write it implies (built when the group is) and what runs once it is committed.
   */
  enqueueRecord(session: SessionState, line: string, also?: () => GroupOp, after?: () => void, seed?: string): void {
    // In the group of the session's first unhashed line: the thread starts its chain there.
    if (seed !== undefined) this.seeds.push(session.ref, seed);
    if (session.pending.length === 0) {
      session.pendingFirstSeq = session.seq + 1;
      this.touched.push(session);
    }
    // While the commit thread takes the groups it reads their lines from the tail log, and
    // the writer needs only their lengths (to cut frames): keeping every queued line alive
    // until its group went made the collector copy each one (2,048 a group, about 800 KB
    // live at every scavenge). Should the thread stop first, they are read back from the
    // tail log (see `restorePending`).
    if (this.threadHashes) {
      session.pending.push(line.length);
      this.lengthsQueued = true;
    } else session.pending.push(line);
    if (this.tail !== undefined) {
      this.unlogged.push(line);
      this.lineRefs.push(session.ref);
    }
    this.queuedLines += 1;
    this.queuedChars += line.length;
    if (also !== undefined) this.queue.push(also);
    if (after !== undefined) this.afterCommit.push(after);
    this.schedule();
  }

  /**
   * Commits a full group before the writer queues one more record (call first, before the
   * record's state is read: a commit resets what the group it commits tracked). Here every
   * earlier write has applied all of its state (seq, head, open calls) and the next one
   * has applied none that a commit reads, so the head rows it writes match its frames.
   */
  makeRoom(): void {
    // The thread's bound from its start, under grouped durability (groups it takes from the tail log).
    const groupLines = this.thread !== undefined && this.tail !== undefined ? MAX_QUEUED_LINES_ON_THREAD : MAX_QUEUED_LINES;
    if (this.queuedLines >= groupLines || this.queuedChars >= MAX_QUEUED_CHARS) this.post();
  }

  /** From now on, `whenDurable` writes the tail log instead of waiting for the commit. */
  useTail(tail: TailLog): void {
    this.tail = tail;
  }

  /**
   * A promise settled once everything queued so far would survive a process crash: after
   * a `write()` of the queued lines to the tail log (grouped durability), else when the
   * group is committed (strict: and fsynced). Starts share that write. It happens once
   * the microtask queue has drained (`process.nextTick`), when every caller that could
   * go on has reached its start: 32 concurrent sessions pay one `write()` where they
   * would pay 32, and a lone caller waits for nothing but its own write. After
   * {@link TICK_WRITES_PER_TURN} such writes in one turn of the event loop, the next one
   * waits for the end of the turn (`setImmediate`): callers whose tools never wait for
   * I/O still let timers and I/O run between their calls.
   */
  whenDurable(): Promise<void> {
    if (this.tail === undefined) return this.whenCommitted();
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.unlogged.length === 0) return Promise.resolve();
    if (this.tailBatch !== undefined) return this.tailBatch;
    if (this.tickWrites === 0) setImmediate(() => (this.tickWrites = 0));
    const defer = this.tickWrites < TICK_WRITES_PER_TURN ? process.nextTick : setImmediate;
    this.tickWrites += 1;
    this.tailBatch = new Promise((resolve, reject) => {
      defer(() => {
        this.tailBatch = undefined;
        if (this.writeTail()) resolve();
        else reject(this.failure);
      });
    });
    return this.tailBatch;
  }

  /** Writes the unlogged lines to the tail log; false (and the journal failed) if that fails. */
  private writeTail(): boolean {
    if (this.failure !== undefined) return false;
    if (this.unlogged.length === 0) return true;
    try {
      this.tail!.append(this.unlogged); // empties it
    } catch (cause) {
      this.fail("writing the tail log failed", cause);
      return false;
    }
    return true;
  }

  /** A promise settled when everything queued so far is committed. */
  whenCommitted(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.pending === 0) {
      const last = this.inFlight.at(-1);
      if (last === undefined) return Promise.resolve();
      return new Promise((resolve, reject) => last.waiters.push({ resolve, reject }));
    }
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule(true);
    });
  }

  private get pending(): number {
    return this.queue.length + this.touched.length;
  }

  /** Stops the commit timer and the commit thread (the journal is closing; `commitNow` has run). */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.checkpoints.stop(CLOSE_TIMEOUT_MS);
    this.thread?.close(CLOSE_TIMEOUT_MS);
    this.thread = undefined;
  }

  /** Commits everything queued, now, and waits for the commit thread to have committed it. Throws if a commit fails. */
  commitNow(): void {
    if (this.failure !== undefined) throw this.failure;
    this.post();
    this.drain();
  }

  /**
   * Sends the queued group on its way: committed on this thread, or posted to the commit
   * thread (waiting for the oldest groups first when {@link MAX_IN_FLIGHT_LINES} records
   * or {@link MAX_IN_FLIGHT_CHARS} characters are on their way). Throws if a commit on
   * this thread fails.
   */
  private post(): void {
    // A thread that stopped is noticed before anything is posted to it.
    if (this.thread !== undefined) this.settle();
    if (this.failure !== undefined) throw this.failure;
    const waiters = this.waiters;
    const after = this.afterCommit;
    this.waiters = [];
    this.afterCommit = [];
    if (this.pending === 0) {
      // Nothing to write: end a lookup's transaction, and settle with the newest group.
      this.statements.endRead();
      const last = this.inFlight.at(-1);
      if (last !== undefined) {
        last.after.push(...after);
        last.waiters.push(...waiters);
      } else settleGroup(after, waiters);
      return;
    }
    const count = this.queuedLines;
    const chars = this.queuedChars;
    const thread = this.thread?.ready === true ? this.thread : undefined;
    // From the first group the thread takes, it hashes the records queued after it.
    if (thread !== undefined && this.tail !== undefined) this.threadHashes = true;
    // A group on its way to the thread is not yet committed: its lines go to the tail log
    // first, so that a later start's earlier records are durable too (replay needs the
    // whole chain up to it).
    if (thread !== undefined && !this.writeTail()) {
      rejectGroup(waiters, this.failure);
      throw this.failure;
    }
    // With a tail log, the thread reads the group's lines from there: no bodies to build.
    const fromTail = thread !== undefined && this.tail !== undefined;
    const lines = fromTail ? this.tail!.groupRange(Int32Array.from(this.lineRefs)) : undefined;
    // Building counts with committing in "auto"'s share: the thread takes both.
    const started = performance.now();
    let writes: GroupWrites;
    try {
      // Committed here, with lines the writer kept as lengths: the thread that was to take
      // them stopped.
      if (!fromTail) this.linesBack();
      writes = this.buildWrites(!fromTail);
    } catch (cause) {
      // The group is lost (its lines stay in the tail log): the journal fails, as after a failed commit.
      this.fail("building a group commit failed", cause);
      rejectGroup(waiters, this.failure);
      throw this.failure;
    } finally {
      for (const session of this.touched) {
        session.pending = [];
        session.unhashed = false;
      }
      this.touched = [];
      this.queue = [];
      this.seeds = [];
      this.unlogged = [];
      this.lineRefs = [];
      this.queuedLines = 0;
      this.queuedChars = 0;
      this.lengthsQueued = false;
      this.tail?.nextGroup();
    }
    if (thread !== undefined) {
      this.statements.endRead();
      try {
        while (this.inFlight.length > 0 && (this.linesInFlight + count > MAX_IN_FLIGHT_LINES || this.charsInFlight + chars > MAX_IN_FLIGHT_CHARS)) {
          this.waitFor(this.inFlight[0]!.n);
        }
      } catch (error) {
        rejectGroup(waiters, error);
        throw error;
      }
      this.posted += 1;
      thread.post(this.posted, writes, lines);
      this.inFlight.push({ n: this.posted, records: count, chars, after, waiters });
      this.linesInFlight += count;
      this.charsInFlight += chars;
      return;
    }
    try {
      this.statements.apply(writes);
    } catch (cause) {
      this.fail("a group commit failed", cause);
      rejectGroup(waiters, this.failure);
      throw this.failure;
    }
    settleGroup(after, waiters);
    this.trimTail();
    this.checkpoints.committed(bodyChars(writes));
    // Under strict durability every start waits for its commit anyway, and a hop to the
    // thread and back only adds to that wait (measured: ~55k against ~80k records/s with
    // 32 writers), so "auto" starts the thread for grouped durability only.
    if (this.thread === undefined && this.threadMode === "auto" && this.tail !== undefined && this.mostlyBusy(performance.now() - started)) this.startThread();
  }

  /**
   * Counts `workMs` spent building and committing a group on this thread into the
   * current window, and says whether two of the last three windows were busy: the share
   * reached (see {@link THREAD_AFTER_COMMIT_SHARE}), the event loop with no time to spare
   * (see {@link THREAD_AFTER_LOOP_BUSY}).
   */
  private mostlyBusy(workMs: number): boolean {
    this.windowWorkMs += workMs;
    const now = performance.now();
    const elapsed = now - this.windowStart;
    if (elapsed < SHARE_WINDOW_MS) return false;
    const loop = performance.eventLoopUtilization();
    const busy = this.windowWorkMs / elapsed >= this.threadAfterShare && performance.eventLoopUtilization(loop, this.windowLoop).utilization >= THREAD_AFTER_LOOP_BUSY;
    this.busyWindows = ((this.busyWindows << 1) | (busy ? 1 : 0)) & 0b111;
    this.windowStart = now;
    this.windowLoop = loop;
    this.windowWorkMs = 0;
    // At least two bits of three set: clearing the lowest leaves one.
    return (this.busyWindows & (this.busyWindows - 1)) !== 0;
  }

  /** Waits (blocking) until every posted group is committed; the tail log may then start over. */
  private drain(): void {
    if (this.inFlight.length > 0) this.waitFor(this.posted);
    this.trimTail();
  }

  /** Waits (blocking) until group `n` is committed, and settles what it committed. Throws if the thread failed. */
  private waitFor(n: number): void {
    if (this.thread?.waitFor(n, THREAD_TIMEOUT_MS) === false) {
      this.failThread(`the commit thread committed nothing for ${THREAD_TIMEOUT_MS / 1000} s`);
    }
    this.settle();
    if (this.failure !== undefined) throw this.failure;
  }

  /** Runs what the committed groups wait for (their after-commit steps, then their promises). */
  private settle(): void {
    const thread = this.thread;
    if (thread === undefined) return;
    const acked = thread.acked;
    let settled = false;
    while (this.inFlight.length > 0 && this.inFlight[0]!.n <= acked) {
      const group = this.inFlight.shift()!;
      this.linesInFlight -= group.records;
      this.charsInFlight -= group.chars;
      settleGroup(group.after, group.waiters);
      settled = true;
    }
    // The writer's connection must read what was just committed (a forgotten session's
    // closing row, say), and must not hold the WAL back with an old snapshot.
    if (settled) this.statements.endRead();
    if (this.switchedUntil !== undefined && acked >= this.switchedUntil) {
      this.switchedUntil = undefined;
      this.tail?.otherCommitted();
    }
    const stopped = thread.stopped();
    if (stopped === undefined) {
      if (this.inFlight.length === 0) thread.idle();
    } else if (this.inFlight.length > 0) this.failThread(stopped);
    // Everything posted was committed (or nothing ever was: it never started): the file
    // is consistent, so commits go on here.
    else this.dropThread();
  }

  /** The commit thread failed or vanished with groups on their way: they are lost, and so is the journal. */
  private failThread(why: string): void {
    if (this.failure === undefined) this.fail("the commit thread failed", new Error(why));
    for (const group of this.inFlight) rejectGroup(group.waiters, this.failure);
    this.inFlight = [];
    this.linesInFlight = 0;
    this.charsInFlight = 0;
    this.dropThread();
  }

  /**
   * Keeps the tail log's files small: once every line written is committed, writing may
   * start over; while groups are on their way to the commit thread, writing moves to the
   * other file right after a post, which is free again once the groups posted so far are
   * committed (see `settle`).
   */
  private trimTail(): void {
    const tail = this.tail;
    if (tail === undefined || this.pending > 0) return;
    if (this.inFlight.length === 0) tail.committedAll();
    else if (tail.large && !tail.switched) {
      tail.switchFiles();
      this.switchedUntil = this.posted;
    }
  }

  private startThread(): void {
    // Absolute paths, resolved when the journal opened: a host may change its working folder.
    this.thread = CommitThread.start(this.filePath, this.synchronous, this.tail?.paths, () => this.settle());
    // The commit thread checkpoints for its own connection (see `Checkpoints`). This one's
    // thread is told to stop, not waited for: the writer goes on at once (`stop` at close waits).
    if (this.thread !== undefined) this.checkpoints.retire();
    this.threadHashes = false;
    // A bundle without the worker file commits on this thread from now on.
    if (this.thread === undefined) this.threadMode = "never";
  }

  /** A commit thread that could not open its connection is given up: commits stay on this thread. */
  private dropThread(): void {
    this.thread?.close(CLOSE_TIMEOUT_MS);
    this.thread = undefined;
    this.threadMode = "never";
    this.threadHashes = false;
  }

  /**
   * The file this writer opened must still be at its path: a folder deleted (or a file
   * replaced) while the journal is open would otherwise take every later record with it
   * silently, each `callStarted` resolving. Checked at most every
   * {@link FILE_CHECK_INTERVAL_MS}, before a commit: one `stat` (about 2 µs).
   */
  private checkFile(): void {
    if (this.failure !== undefined) return;
    const now = Date.now();
    if (now - this.fileCheckedAt < FILE_CHECK_INTERVAL_MS) return;
    this.fileCheckedAt = now;
    let problem: string | undefined;
    try {
      const stats = statSync(this.filePath);
      if (stats.ino !== this.fileIdentity.ino || stats.dev !== this.fileIdentity.dev) problem = "the journal file was replaced by another file while it was open";
    } catch {
      problem = "the journal file is gone: it (or its folder) was deleted while it was open";
    }
    if (problem === undefined) return;
    this.fail(problem, new Error("the records written since are not in any file"));
    const waiters = this.waiters;
    this.waiters = [];
    rejectGroup(waiters, this.failure);
  }

  private fail(what: string, cause: unknown): void {
    this.failure = journalError(
      JOURNAL_ERRORS.WRITE_FAILED,
      `journal ${JSON.stringify(this.file)}: ${what} (${cause instanceof Error ? cause.message : String(cause)}); the records of that group are lost and the journal accepts no more writes, reopen it`,
      { path: this.file },
      cause,
    );
  }

  /**
   * The group as data: one frame per touched session (linked to its previous frame), the
   * head rows of the sessions still open, then the other writes. A session that closed in
   * this group drops its head row: its `sessions` row takes the final head (see the
   * writer's close, built after the frames so it names the closing frame).
   */
  private buildWrites(withBodies: boolean): GroupWrites {
    const frames: (string | number | null)[] = [];
    const heads: (string | number | null)[] = [];
    const ops: GroupOp[] = [];
    for (const session of this.touched) {
      // Frame bodies built here hold every line's hash (the thread builds its own).
      if (withBodies && (session.unhashed || session.head === undefined)) this.hashPending(session);
      // One frame per `MAX_PIECE` characters of the session's lines (one, but for a busy
      // session: its body would be a large-object string), consecutive in `frames`, each
      // linked to the one before; the commit thread counts each frame's lines from the
      // next frame's first `seq`.
      const lines = session.pending;
      let from = 0;
      let chars = 0;
      for (let index = 0; index < lines.length; index += 1) {
        const line = lines[index]!;
        chars += (typeof line === "number" ? line : line.length) + 1;
        if (chars < MAX_PIECE && index < lines.length - 1) continue;
        const id = this.nextFrame;
        this.nextFrame += 1;
        const body = withBodies ? (from === 0 && index === lines.length - 1 ? lines : lines.slice(from, index + 1)).join("\n") : null;
        frames.push(id, session.ref, session.pendingFirstSeq + from, session.headFrame, body);
        session.headFrame = id;
        from = index + 1;
        chars = 0;
      }
      if (session.closed) ops.push(["drop", session.ref]);
      else heads.push(session.ref, session.headFrame!, session.seq, session.head ?? null, session.callCount, openCallsJson(session));
    }
    for (const op of this.queue) ops.push(op());
    return { frames, heads, ops, seeds: this.seeds };
  }

  /**
   * Hashes the session's queued unhashed lines onto its chain, here: the commit thread
   * that was to hash them stopped (with every group posted to it committed, so the file
   * holds the head they continue).
   */
  private hashPending(session: SessionState): void {
    this.linesBack();
    // The head the group's first bare line of the session continues: its seed when the
    // thread was told it in this group (a session opened in it has no head row yet), else
    // the file's head row, as the thread committed it (not from an older snapshot).
    let head = session.head ?? this.seedOf(session.ref);
    if (head === undefined) {
      if (this.inFlight.length > 0) throw new Error("a session's chain head is on the commit thread");
      this.statements.endRead();
      head = this.storedHead!(session);
    }
    // Every queued line is a string again (`linesBack`).
    session.head = chainLines(head, session.pending as string[], `session ${JSON.stringify(session.sessionId)}`);
    session.unhashed = false;
  }

  /**
   * Makes the queued lines the writer kept as lengths strings again, from the tail log,
   * where they all are once the unwritten ones are written (the commit thread that was to
   * take them stopped, and this thread hashes or commits them). Throws, the journal
   * failed, if they cannot be read back.
   */
  private linesBack(): void {
    if (!this.lengthsQueued) return;
    if (!this.writeTail()) throw this.failure;
    try {
      this.restorePending();
    } catch (cause) {
      this.fail("reading the queued records back from the tail log failed", cause);
      throw this.failure;
    }
    this.lengthsQueued = false;
  }

  /**
   * Puts back, in each touched session's `pending`, the lines the writer kept as lengths
   * only, read from the tail log's range of the queued group (one session ref per line
   * in `lineRefs`, in order). Throws if the range holds another number of lines.
   */
  private restorePending(): void {
    const lines = this.tail!.readGroup();
    if (lines.length !== this.lineRefs.length) {
      throw new Error(`the tail log holds ${lines.length} lines of the queued group, where ${this.lineRefs.length} were queued`);
    }
    const next = new Map<number, number>();
    const byRef = new Map(this.touched.map((session) => [session.ref, session]));
    for (let index = 0; index < lines.length; index += 1) {
      const ref = this.lineRefs[index]!;
      const at = next.get(ref) ?? 0;
      byRef.get(ref)!.pending[at] = lines[index]!;
      next.set(ref, at + 1);
    }
  }

  /** The seed the group being queued holds for a session, if any. */
  private seedOf(ref: number): string | undefined {
    for (let index = 0; index < this.seeds.length; index += 2) if (this.seeds[index] === ref) return this.seeds[index + 1] as string;
    return undefined;
  }

  /**
   * Schedules the group's commit: on the next turn of the event loop when someone waits
   * for it (`soon`: a flush, or a start under strict durability), else, with a tail log,
   * after {@link TAIL_COMMIT_INTERVAL_MS}: starts are already durable in the tail, so
   * waiting a little longer only makes groups larger (fewer, fuller commits).
   */
  private schedule(soon = false): void {
    if (soon || this.tail === undefined) {
      if (this.immediate) return;
      this.immediate = true;
      setImmediate(() => {
        this.immediate = false;
        this.commitScheduled();
      });
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.commitScheduled();
    }, TAIL_COMMIT_INTERVAL_MS);
  }

  private commitScheduled(): void {
    this.checkFile();
    try {
      this.post();
      this.trimTail();
    } catch {
      // Already recorded in `failure`: the next write or flush reports it.
    }
  }
}

function rejectGroup(waiters: readonly Waiter[], error: unknown): void {
  for (const waiter of waiters) waiter.reject(error);
}

function settleGroup(after: readonly (() => void)[], waiters: readonly Waiter[]): void {
  for (const run of after) run();
  for (const waiter of waiters) waiter.resolve();
}
