// The commit thread of a journal writer (see `commit-thread.ts`): opens its own
// connection to the journal file and commits the groups the writer posts, in order.
// Built as its own file, `journal-commit-worker.js`; a host that bundles the journal
// ships it beside its bundle (see the README, "Commit thread").
import { workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { type CommitThreadData, type CommitThreadMessage, type PostedGroup, SLOT, unpackBodies } from "./commit-thread.js";
import { GroupStatements, writerPragmas } from "./group-writes.js";

const { file, synchronous, state, port } = workerData as CommitThreadData;
const shared = new Int32Array(state);

function publish(slot: number, value: number): void {
  Atomics.store(shared, slot, value);
  Atomics.notify(shared, slot);
}

function report(failed: number, error: unknown): void {
  const message: CommitThreadMessage = { failed, message: error instanceof Error ? error.message : String(error) };
  port.postMessage(message);
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
  report(0, error);
  publish(SLOT.READY, -1);
}

port.on("message", (message: PostedGroup | "close") => {
  if (message === "close") {
    try {
      db?.close();
    } finally {
      port.close();
      publish(SLOT.CLOSED, 1);
    }
    return;
  }
  // After a failed commit the chain in the file is behind the writer's: take no more.
  if (statements === undefined || Atomics.load(shared, SLOT.FAILED) !== 0) return;
  try {
    statements.apply(unpackBodies(message));
  } catch (error) {
    report(message.n, error);
    publish(SLOT.FAILED, message.n);
    Atomics.notify(shared, SLOT.ACKED);
    return;
  }
  publish(SLOT.ACKED, message.n);
  port.postMessage(message.n satisfies CommitThreadMessage);
});
