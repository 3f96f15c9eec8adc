// The checkpoint thread of the connection that commits (see `checkpoint-thread.ts`): opens
// its own connection to the journal file and runs a PASSIVE checkpoint each time it is
// asked, until it is told to stop. Built as its own file, `journal-checkpoint-worker.js`,
// beside the commit thread's.
import { closeSync, openSync, readSync } from "node:fs";
import { workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { CHECKPOINT_SLOT, type CheckpointThreadData } from "./checkpoint-thread.js";
import { WAL_CHECKPOINT_PAGES } from "./group-writes.js";

const { file, synchronous, state } = workerData as CheckpointThreadData;
const shared = new Int32Array(state);
Atomics.store(shared, CHECKPOINT_SLOT.STARTED, 1);

/**
 * The `-wal`'s checkpoint count (its header's bytes 12–15): SQLite adds one each time a
 * write restarts the `-wal` from its beginning. `undefined` if it cannot be read.
 */
function walRestarts(): number | undefined {
  const header = Buffer.alloc(16);
  let fd: number | undefined;
  try {
    fd = openSync(`${file}-wal`, "r");
    return readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

let db: Database.Database | undefined;
try {
  // Stopped while it loaded: no connection at all.
  if (Atomics.load(shared, CHECKPOINT_SLOT.STOP) !== 0) throw new Error("stopped");
  db = new Database(file, { fileMustExist: true });
  db.pragma(`synchronous = ${synchronous}`);
  // It never writes: checkpoints only, and those copy pages without this cache.
  db.pragma("cache_size = 0");
  let seen = 0;
  /**
   * Set while this thread stays out of the committing connection's way: the `-wal`'s
   * checkpoint count when it last found the `-wal` past the committing connection's limit.
   */
  let standingBy: number | undefined;
  while (Atomics.load(shared, CHECKPOINT_SLOT.STOP) === 0) {
    Atomics.wait(shared, CHECKPOINT_SLOT.REQUESTS, seen);
    seen = Atomics.load(shared, CHECKPOINT_SLOT.REQUESTS);
    if (Atomics.load(shared, CHECKPOINT_SLOT.STOP) !== 0) break;
    // The `-wal` restarts from its beginning only when a write begins with all of it
    // copied. Under a writer that never pauses, PASSIVE checkpoints here never catch up,
    // and while one holds the checkpoint lock the committing connection's own checkpoint
    // (which would finish the copy, and after which its next write restarts the `-wal`)
    // is skipped: the `-wal` would grow without bound. So once it passes that
    // connection's limit, this thread stands by until the `-wal` has restarted: the
    // committing connection then copies what is left (little) after one of its commits.
    if (standingBy !== undefined) {
      if (walRestarts() === standingBy) continue;
      standingBy = undefined;
    }
    try {
      // PASSIVE: copies what no reader still needs, never waits for or blocks the writer.
      const [passive] = db.pragma("wal_checkpoint(PASSIVE)") as { log: number }[];
      if (passive !== undefined && passive.log >= WAL_CHECKPOINT_PAGES) standingBy = walRestarts();
    } catch {
      // The committing connection's own checkpoints go on.
    }
  }
} catch {
  // Could not open its connection (or was stopped first): the committing connection checkpoints alone.
} finally {
  db?.close();
  Atomics.store(shared, CHECKPOINT_SLOT.CLOSED, 1);
  Atomics.notify(shared, CHECKPOINT_SLOT.CLOSED);
}
