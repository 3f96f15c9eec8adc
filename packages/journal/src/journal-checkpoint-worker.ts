// The checkpoint thread of a commit thread (see `checkpoint-thread.ts`): opens its own
// connection to the journal file and runs a PASSIVE checkpoint each time the commit
// thread asks, until it is told to stop. Built as its own file,
// `journal-checkpoint-worker.js`, beside the commit thread's.
import { workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { CHECKPOINT_SLOT, type CheckpointThreadData } from "./checkpoint-thread.js";

const { file, synchronous, state } = workerData as CheckpointThreadData;
const shared = new Int32Array(state);

let db: Database.Database | undefined;
try {
  db = new Database(file, { fileMustExist: true });
  db.pragma(`synchronous = ${synchronous}`);
  // It never writes: checkpoints only, and those copy pages without this cache.
  db.pragma("cache_size = 0");
  let seen = 0;
  while (Atomics.load(shared, CHECKPOINT_SLOT.STOP) === 0) {
    Atomics.wait(shared, CHECKPOINT_SLOT.REQUESTS, seen);
    seen = Atomics.load(shared, CHECKPOINT_SLOT.REQUESTS);
    if (Atomics.load(shared, CHECKPOINT_SLOT.STOP) !== 0) break;
    try {
      // PASSIVE: copies what no reader still needs, never waits for or blocks the writer.
      db.pragma("wal_checkpoint(PASSIVE)");
    } catch {
      // The commit connection's own checkpoints go on.
    }
  }
} catch {
  // Could not open its connection: the commit connection checkpoints alone.
} finally {
  db?.close();
  Atomics.store(shared, CHECKPOINT_SLOT.CLOSED, 1);
  Atomics.notify(shared, CHECKPOINT_SLOT.CLOSED);
}
