import { TailLog } from "./tail-log.js";
import type { JournalWarning } from "./warnings.js";
import type { JournalWriter, LostLine } from "./writer.js";

/**
 * Replays what a crash left only in the tail log, in `seq` order (see `TailLog` and
 * `JournalWriter.replay`), and returns a warning per session whose tail-log records could
 * not all be replayed because records before them are in neither the database nor the
 * tail log. A crash alone never does that (the tail log holds every record since the last
 * commit, up to the last one written); a `-wal` file lost or damaged since the last
 * checkpoint does: SQLite then opens the database without the records committed there,
 * and says nothing.
 */
export function replayTailLog(writer: JournalWriter, file: string): JournalWarning[] {
  const lost = new Map<string, { first: LostLine; count: number }>();
  for (const line of TailLog.read(file)) {
    const result = writer.replay(line);
    if (typeof result === "string") continue;
    const known = lost.get(result.sessionId);
    if (known === undefined) lost.set(result.sessionId, { first: result, count: 1 });
    else known.count += 1;
  }
  return [...lost.values()].map(({ first, count }) => ({
    kind: "tail-records-lost",
    sessionId: first.sessionId,
    message: lostMessage(first, count),
  }));
}

function lostMessage(first: LostLine, count: number): string {
  const head = `session ${JSON.stringify(first.sessionId)}: the tail log holds ${count} record(s) from seq ${first.seq} that cannot be replayed`;
  if (first.chainSeq === undefined) return `${head}: the session's head row is damaged`;
  const end = first.chainSeq === 0 ? "the database holds no record of the session" : `its chain in the database ends at seq ${first.chainSeq}`;
  const missing = first.seq - first.chainSeq - 1;
  const gap =
    missing === 0
      ? " and the record there does not continue it"
      : missing === 1
        ? `, and record ${first.chainSeq + 1} is in neither`
        : `, and records ${first.chainSeq + 1} to ${first.seq - 1} are in neither`;
  return `${head}: ${end}${gap}. They are lost; a -wal file lost or damaged since the last checkpoint loses committed records this way`;
}
