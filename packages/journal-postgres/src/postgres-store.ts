import type { ChainHead, GroupOp, GroupWrites, JournalStore, StoredSession } from "@openworker/journal/internal/store";
import { parseFrameLine } from "@openworker/journal/internal/store";
import type pg from "pg";
import { JOURNAL_POSTGRES_ERRORS, postgresError } from "./errors.js";

/** Each host's refs and frame ids lie in a block of its own: host number × 2^32 onwards (host numbers come from a sequence). */
const BLOCK = 2 ** 32;
const FRAME_COLUMNS = 5;
const HEAD_COLUMNS = 6;

/**
 * The journal's store on PostgreSQL, for one host. Commits run one at a time on the host's own connection, each in one transaction that
 * first renews the host's lease (and fails if the lease is gone: another host may own its sessions now). Reads are served from what
 * this host loaded when it took sessions over: a host writes only the sessions it opened or recovered.
 */
export class PostgresStore implements JournalStore {
  readonly inTransaction = false;
  private readonly loaded = new Map<string, StoredSession>();
  /** The records of sessions taken over, oldest first, with every line handed over since. */
  private readonly history = new Map<number, string[]>();
  private recovering: string[] = [];
  private tail: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;

  constructor(
    private readonly client: pg.Client,
    readonly hostId: string,
    private readonly hostNo: number,
    private readonly leaseSeconds: number,
    private readonly journal: string,
  ) {}
  session(sessionId: string): StoredSession | undefined {
    return this.loaded.get(sessionId);
  }
  lastRef(): number {
    return this.hostNo * BLOCK;
  }
  lastFrame(): number {
    return this.hostNo * BLOCK;
  }
  sessionsWithOpenCalls(): string[] {
    return this.recovering;
  }
  *newestFirst(head: ChainHead): Generator<string> {
    const lines = this.history.get(head.ref) ?? [];
    for (let index = lines.length - 1; index >= 0; index -= 1) {
      const parsed = parseFrameLine(lines[index]!);
      if (parsed === undefined) return;
      yield parsed.data;
    }
  }
  commit(group: GroupWrites): Promise<void> {
    for (let index = 0; index < group.frames.length; index += FRAME_COLUMNS) {
      const lines = this.history.get(group.frames[index + 1] as number);
      if (lines !== undefined) lines.push(...(group.frames[index + 4] as string).split("\n"));
    }
    return this.serial(() => this.write(group), true);
  }
  beginRead(): void {}
  endRead(): void {}
  close(): void {}
  /** Renews this host's lease; once it is gone, every later commit fails with `JOURNAL_PG_LEASE_LOST`. */
  renewLease(): Promise<void> {
    return this.serial(async () => {
      if ((await this.renew()) === 0) this.failure ??= this.leaseLost();
    }, false);
  }
  /** Gives up the lease at close: the sessions this host leaves open are recovered by the next host that looks. */
  async release(): Promise<void> {
    await this.tail;
    await this.client.query("UPDATE hosts SET lease_until = '-infinity' WHERE host_id = $1", [this.hostId]);
  }
  /**
   * Takes over the open sessions of every host whose lease expired, in one transaction (the dead host's row is locked, so a host that
   * renews at that moment either renews first or finds its lease gone), and loads them for recovery. Returns the ids taken over.
   */
  claimDeadHosts(): Promise<string[]> {
    return this.serial(async () => {
      const client = this.client;
      await client.query("BEGIN");
      let claimed: string[];
      try {
        const dead = await client.query<{ host_id: string }>("SELECT host_id FROM hosts WHERE lease_until < now() AND host_id <> $1 FOR UPDATE SKIP LOCKED", [
          this.hostId,
        ]);
        const hosts = dead.rows.map((row) => row.host_id);
        const taken =
          hosts.length === 0
            ? { rows: [] as { session_id: string }[] }
            : await client.query<{ session_id: string }>(
                "UPDATE sessions SET owner = $1 WHERE owner = ANY($2::text[]) AND closed_at IS NULL RETURNING session_id",
                [this.hostId, hosts],
              );
        if (hosts.length > 0) await client.query("DELETE FROM hosts WHERE host_id = ANY($1::text[])", [hosts]);
        await client.query("COMMIT");
        claimed = taken.rows.map((row) => row.session_id);
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
      if (claimed.length > 0) await this.load(claimed);
      return claimed;
    }, false);
  }
  /** Which of the sessions just taken over recovery visits; emptied once it ran. */
  doneRecovering(): void {
    this.recovering = [];
  }
  private async load(sessionIds: string[]): Promise<void> {
    const rows = await this.client.query<StoredSession & { sessionId: string }>(
      `SELECT s.session_id AS "sessionId", s.ref, s.execution_identity AS "executionIdentity", s.closed_at AS "closedAt", l.head_frame AS "headFrame",
              l.seq, l.hash, l.calls, l.open_calls AS "openCalls"
         FROM sessions s LEFT JOIN live_sessions l ON l.ref = s.ref WHERE s.session_id = ANY($1::text[]) ORDER BY s.ref`,
      [sessionIds],
    );
    const refs = rows.rows.map((row) => row.ref);
    const frames = await this.client.query<{ session_ref: number; body: string }>(
      "SELECT session_ref, body FROM frames WHERE session_ref = ANY($1::bigint[]) ORDER BY session_ref, first_seq",
      [refs],
    );
    for (const ref of refs) this.history.set(ref, []);
    for (const frame of frames.rows) this.history.get(frame.session_ref)!.push(...frame.body.split("\n"));
    const recovering: string[] = [];
    for (const row of rows.rows) {
      const { sessionId, ...stored } = row;
      this.loaded.set(sessionId, stored);
      if (stored.closedAt === null && stored.openCalls !== "{}") recovering.push(sessionId);
    }
    this.recovering = recovering;
  }
  private async write(group: GroupWrites): Promise<void> {
    const client = this.client;
    await client.query("BEGIN");
    try {
      if ((await this.renew()) === 0) throw this.leaseLost();
      if (group.frames.length > 0)
        await client.query(
          "INSERT INTO frames (id, session_ref, first_seq, prev_frame, body) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[])",
          columns(group.frames, FRAME_COLUMNS),
        );
      if (group.heads.length > 0)
        await client.query(
          `INSERT INTO live_sessions (ref, head_frame, seq, hash, calls, open_calls)
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::text[])
             ON CONFLICT (ref) DO UPDATE SET head_frame = excluded.head_frame, seq = excluded.seq, hash = excluded.hash, calls = excluded.calls,
               open_calls = excluded.open_calls`,
          columns(group.heads, HEAD_COLUMNS),
        );
      for (const op of group.ops) await this.apply(op);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  }
  private async apply(op: GroupOp): Promise<void> {
    if (op[0] === "session")
      await this.client.query(
        "INSERT INTO sessions (ref, session_id, execution_identity, workspace, bundle_dir, opened_at, owner) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        [...op.slice(1), this.hostId],
      );
    else if (op[0] === "close")
      await this.client.query(
        "UPDATE sessions SET closed_at = $1, final_seq = $2, final_hash = $3, final_frame = $4, final_calls = $5, owner = NULL WHERE ref = $6",
        op.slice(1),
      );
    else await this.client.query("DELETE FROM live_sessions WHERE ref = $1", [op[1]]);
  }
  private async renew(): Promise<number> {
    const renewed = await this.client.query("UPDATE hosts SET lease_until = now() + make_interval(secs => $2) WHERE host_id = $1 AND lease_until > now()", [
      this.hostId,
      this.leaseSeconds,
    ]);
    return renewed.rowCount ?? 0;
  }
  private leaseLost(): Error {
    return postgresError(
      JOURNAL_POSTGRES_ERRORS.LEASE_LOST,
      `journal ${this.journal}: this host's lease expired (host ${this.hostId}), so another host may have taken its sessions over; nothing more is written: open the journal again`,
      { hostId: this.hostId },
    );
  }
  /** Runs one task after the ones before it; `poisons`: a failure of this task refuses every later one (a commit's). */
  private serial<T>(task: () => Promise<T>, poisons: boolean): Promise<T> {
    const run = this.tail.then(() => {
      if (this.failure !== undefined) throw this.failure;
      return task();
    });
    this.tail = run.catch((error: unknown) => {
      if (poisons) this.failure ??= error instanceof Error ? error : new Error(String(error));
    });
    return run;
  }
}

/** Row-major values as one array per column, for `unnest`. */
function columns(values: readonly unknown[], width: number): unknown[][] {
  const out = Array.from({ length: width }, () => [] as unknown[]);
  for (let index = 0; index < values.length; index += 1) out[index % width]!.push(values[index]);
  return out;
}
