import type { ChainHead } from "./frames.js";

/** One group commit as plain rows. */
export interface GroupWrites {
  readonly frames: (string | number | null)[];
  readonly heads: (string | number | null)[];
  readonly ops: GroupOp[];
}

/** A write beside the frames: a session opened, closed, or its head row dropped once closed. */
export type GroupOp =
  | readonly [op: "session", ref: number, sessionId: string, identity: string, workspace: string, bundleDir: string | null, openedAt: string]
  | readonly [op: "close", closedAt: string, seq: number, hash: string, finalFrame: number | null, calls: number, ref: number]
  | readonly [op: "drop", ref: number];

/** A session as the store holds it: its row, and its head row while it is open. */
export interface StoredSession {
  readonly ref: number;
  readonly executionIdentity: string;
  readonly closedAt: string | null;
  /** The head row's columns; `null` for a closed session. */
  readonly headFrame: number | null;
  readonly seq: number | null;
  readonly hash: string | null;
  readonly calls: number | null;
  readonly openCalls: unknown;
}
/**
 * What the write path needs from storage: the seam a second store (a PostgreSQL adapter) implements. `commit` is atomic, and durable as the
 * store's durability mode says when it returns (a synchronous store) or when its promise resolves (an asynchronous one, which commits
 * groups in the order they were handed over and, once one fails, refuses the rest). Reads are synchronous: an asynchronous store serves
 * them from what it loaded before the writer used it, and they see every group handed over before them.
 */
export interface JournalStore {
  /** The session's rows, or `undefined` if it was never opened. */
  session(sessionId: string): StoredSession | undefined;
  /** The largest session ref and frame id in use (0 for none). */
  lastRef(): number;
  lastFrame(): number;
  /** The ids of live sessions whose head row lists open calls, oldest first: what recovery visits. */
  sessionsWithOpenCalls(): string[];
  /** The data of a session's committed records, newest first (recovery reads only as far as it needs). */
  newestFirst(head: ChainHead): Iterable<string>;
  /** Commits one group in one transaction. */
  commit(group: GroupWrites): void | Promise<void>;
  /** Whether a read transaction is open (the next commit ends it). */
  readonly inTransaction: boolean;
  beginRead(): void;
  endRead(): void;
  close(): void;
}
