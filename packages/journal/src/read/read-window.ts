import type Database from "better-sqlite3";

/** Read transactions of bounded length for a long read beside a writer (`verify()`). */
export class ReadWindow {
  private readonly begin: Database.Statement;
  private readonly end: Database.Statement;
  private open = false;
  private reads = 0;
  /** Transactions ended so far. */
  transactions = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly maxReads: number,
    /** Runs after each transaction ends, with none open (tests use it to act between them). */
    private readonly between?: () => void,
  ) {
    this.begin = db.prepare("BEGIN");
    this.end = db.prepare("COMMIT");
  }
  /** Runs `read` inside the current read transaction, opening one if none is open. */
  read<T>(read: () => T): T {
    if (!this.open) {
      // A connection already inside a transaction (none of the journal's paths leaves one
      // open here) is read as it is: its transaction is not ours to end.
      if (this.db.inTransaction) return read();
      this.begin.run();
      this.open = true;
    }
    try {
      return read();
    } finally {
      this.reads += 1;
      if (this.reads >= this.maxReads) this.release();
    }
  }
  /** Ends the current read transaction, if one is open. */
  release(): void {
    if (!this.open) return;
    this.open = false;
    this.reads = 0;
    if (this.db.inTransaction) {
      try {
        this.end.run();
      } catch (error) {
        // A damaged file can fail the COMMIT of a read: the connection must not stay
        // inside the transaction (every later read would see its snapshot).
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw error;
      }
    }
    this.transactions += 1;
    this.between?.();
  }
}
