import type { CallSummary, ChainBreak, JournalRecord, SessionSummary, VerifyReport } from "@openworker/journal";
import {
  ChainWalk,
  GENESIS_HASH,
  parseFrameLine,
  readContent,
  summarizeCalls,
  toSession,
  type SessionRow,
  type VerifiedSessionRow,
} from "@openworker/journal/internal/store";
import { canonicalJson } from "@openworker/tools-sdk";
import type { ReadConnection } from "./connection.js";

const SUMMARY_COLUMNS = `s.ref, s.session_id, s.execution_identity, s.workspace, s.bundle_dir, s.opened_at, s.closed_at, s.final_seq, s.final_hash,
  s.final_frame, s.final_calls, l.head_frame, l.seq, l.hash, l.calls, l.open_calls FROM sessions s LEFT JOIN live_sessions l ON l.ref = s.ref`;

/** A session's stored records in chain order, with the link each continues; stops where the chain breaks (`verify()` says where). */
interface StoredRecord {
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
  readonly data: string;
}

/** The query side on PostgreSQL: the SQLite journal's summaries, records, export and `verify()`, each read in one snapshot. */
export class PostgresReads {
  constructor(private readonly connection: ReadConnection) {}

  async sessions(): Promise<SessionSummary[]> {
    const rows = await this.connection.query<SessionRow>(`SELECT ${SUMMARY_COLUMNS} ORDER BY s.opened_at, s.ref`);
    return rows.rows.map(toSession);
  }
  async session(sessionId: string): Promise<SessionSummary | undefined> {
    const rows = await this.connection.query<SessionRow>(`SELECT ${SUMMARY_COLUMNS} WHERE s.session_id = $1`, [sessionId]);
    return rows.rows[0] === undefined ? undefined : toSession(rows.rows[0]);
  }
  async records(sessionId: string): Promise<JournalRecord[]> {
    const stored = await this.stored(sessionId);
    return stored.map((record) => ({ ...readContent(record.data, sessionId, record.seq), prevHash: record.prevHash, hash: record.hash }) as JournalRecord);
  }
  async calls(sessionId: string): Promise<CallSummary[]> {
    return summarizeCalls(sessionId, await this.records(sessionId));
  }
  async exportSession(sessionId: string): Promise<string[]> {
    const stored = await this.stored(sessionId);
    return stored.map(
      (record) => canonicalJson({ ...readContent(record.data, sessionId, record.seq), prevHash: record.prevHash, hash: record.hash }) as string,
    );
  }
  /** Every chain (or one session's), checked as the SQLite journal's `verify()` checks them, in one repeatable-read snapshot. */
  async verify(sessionId?: string): Promise<VerifyReport> {
    return this.connection.snapshot(async (client) => {
      const where = sessionId === undefined ? "" : "WHERE s.session_id = $1";
      const rows = await client.query<VerifiedSessionRow>(`SELECT ${SUMMARY_COLUMNS} ${where} ORDER BY s.ref`, sessionId === undefined ? [] : [sessionId]);
      let records = 0;
      let firstBreak: ChainBreak | undefined;
      for (const row of rows.rows) {
        const frames = await client.query<{ id: number; first_seq: number; body: string }>(
          "SELECT id, first_seq, body FROM frames WHERE session_ref = $1 ORDER BY first_seq",
          [row.ref],
        );
        const walk = new ChainWalk(row);
        for (const frame of frames.rows) if (!walk.frame(frame.id, { firstSeq: frame.first_seq, body: frame.body })) break;
        const problem = walk.problem ?? walk.end();
        records += walk.last;
        if (problem !== undefined) {
          firstBreak = { sessionId: row.session_id, ...problem };
          break;
        }
      }
      if (firstBreak === undefined && sessionId === undefined) {
        const orphans = await client.query<{ session_ref: number; first_seq: number }>(
          "SELECT f.session_ref, f.first_seq FROM frames f WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.ref = f.session_ref) LIMIT 1",
        );
        const orphan = orphans.rows[0];
        if (orphan !== undefined)
          firstBreak = {
            sessionId: `(ref ${orphan.session_ref})`,
            seq: orphan.first_seq,
            problem: "altered index: frames of a session the sessions table does not hold",
          };
      }
      const sessions = rows.rows.length;
      return firstBreak === undefined ? { ok: true, sessions, records } : { ok: false, sessions, records, firstBreak };
    });
  }
  private async stored(sessionId: string): Promise<StoredRecord[]> {
    return this.connection.snapshot(async (client) => {
      const frames = await client.query<{ first_seq: number; body: string }>(
        "SELECT f.first_seq, f.body FROM frames f JOIN sessions s ON s.ref = f.session_ref WHERE s.session_id = $1 ORDER BY f.first_seq",
        [sessionId],
      );
      const out: StoredRecord[] = [];
      let prevHash = GENESIS_HASH;
      let seq = 1;
      for (const frame of frames.rows) {
        if (frame.first_seq !== seq) return out;
        for (const line of frame.body.split("\n")) {
          const parsed = parseFrameLine(line);
          if (parsed === undefined) return out;
          out.push({ seq, prevHash, hash: parsed.hash, data: parsed.data });
          prevHash = parsed.hash;
          seq += 1;
        }
      }
      return out;
    });
  }
}
