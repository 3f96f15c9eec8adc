import type { JournalStore } from "../store/store.js";
import type { JournalWarning } from "../warnings.js";
import { GroupCommit } from "./group-commit.js";
import { LiveState } from "./live-state.js";
import { type InterruptedCall, recoverInterruptedCalls } from "./recovery.js";
import { JournalWriter } from "./writer.js";

/** The record methods of a journal writer (one per record kind): what a journal over another store exposes as its own. */
export type RecordWriter = Omit<JournalWriter, "state" | "interrupt" | "pinnedAt">;

/**
 * The journal's write path over any {@link JournalStore}: the record checks, the chains and the group commit of the SQLite journal,
 * for a store that is not a file (no file is watched). An asynchronous store gets the same contract: `callStarted` resolves once the
 * store committed the group holding its record.
 */
export class JournalEngine {
  readonly commit: GroupCommit;
  readonly state: LiveState;
  readonly writer: JournalWriter;

  /** `name`: how messages name the journal (never a secret). */
  constructor(
    private readonly store: JournalStore,
    name: string,
  ) {
    this.commit = new GroupCommit(store, name, false);
    this.state = new LiveState(
      store,
      (read) => this.commit.lookup(read),
      () => this.commit.commitNow(),
    );
    this.writer = new JournalWriter(this.commit, this.state);
  }
  /** Marks `interrupted` every open call of the sessions the store lists as having open calls, and hands the records to the store (A3). */
  recover(): { recovered: InterruptedCall[]; warnings: JournalWarning[] } {
    return recoverInterruptedCalls(this.store, this.state, this.writer, this.commit);
  }
  /** Resolves once everything handed over so far is committed; rejects with `JOURNAL_WRITE_FAILED` once a commit failed. */
  flush(): Promise<void> {
    try {
      this.commit.commitNow();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.commit.whenCommitted();
  }
}
