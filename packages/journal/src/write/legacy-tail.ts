import { readFileSync, rmSync, statSync } from "node:fs";
import { crc32 } from "node:zlib";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS, journalError } from "../errors.js";
import { chainHash, GENESIS_HASH, HASH_LENGTH } from "../records/chain.js";
import { RECORD_KINDS } from "../records/records.js";
import { kindOf } from "../store/journal-path.js";
import type { JournalWarning } from "../warnings.js";
import type { SessionState } from "./live-state.js";
import type { JournalWriter } from "./writer.js";

/** Replays a tail log an older writer of this package left beside the journal (`<journal>-tail`, `<journal>-tail.1`: records written before their group commit). */
export function replayLegacyTail(writer: JournalWriter, file: string): JournalWarning[] {
  const lines = legacyFiles(file)
    .flatMap(completeLines)
    .map((line, index) => ({ line, index, seq: seqOf(line) }));
  lines.sort((a, b) => a.seq - b.seq || a.index - b.index);
  const lost = new Map<string, { first: LostLine; count: number }>();
  for (const { line } of lines) {
    const result = replayLine(writer, line);
    const known = result === undefined ? undefined : lost.get(result.sessionId);
    if (known !== undefined) known.count += 1;
    else if (result !== undefined) lost.set(result.sessionId, { first: result, count: 1 });
  }
  return Array.from(lost.values(), ({ first, count }) => ({ kind: "tail-records-lost", sessionId: first.sessionId, message: lostMessage(first, count) }));
}
/** Removes the legacy tail-log files, once what they held is committed. */
export function removeLegacyTail(file: string): void {
  for (const name of legacyFiles(file)) rmSync(name, { force: true });
}
/** A record the database lacks that could not be replayed, and where its session's chain ends (`undefined`: unreadable). */
type LostLine = { readonly sessionId: string; readonly seq: number; readonly chainSeq: number | undefined };

/** The writer method that writes a record kind: `call_started` → `callStarted`. */
function writeMethodOf(kind: unknown): string | undefined {
  return (RECORD_KINDS as readonly unknown[]).includes(kind) ? (kind as string).replace(/_(\w)/g, (_, letter: string) => letter.toUpperCase()) : undefined;
}

function replayLine(writer: JournalWriter, line: string): LostLine | undefined {
  const hashed = line.charCodeAt(0) !== OPEN_BRACE;
  const data = hashed ? line.slice(HASH_LENGTH + 1) : line;
  let content: { sessionId?: unknown; seq?: unknown; at?: unknown; kind?: unknown };
  try {
    content = JSON.parse(data) as typeof content;
  } catch {
    return undefined;
  }
  const { sessionId, seq } = content as { sessionId: string; seq: number };
  if (typeof content !== "object" || content === null || typeof sessionId !== "string" || typeof seq !== "number") return undefined;
  let session: SessionState | undefined;
  try {
    session = writer.state.session(sessionId);
  } catch (error) {
    if (OpenWorkerError.hasCode(error, JOURNAL_ERRORS.DAMAGED)) return { sessionId, seq, chainSeq: undefined };
    throw error;
  }
  const next = session === undefined ? 1 : session.seq + 1;
  if (session?.closed === true || seq < next) return undefined;
  const lost = { sessionId, seq, chainSeq: next - 1 };
  const method = writeMethodOf(content.kind);
  if (seq > next || method === undefined || (session === undefined) !== (method === "sessionOpened")) return lost;
  const expected = chainHash(session?.head ?? GENESIS_HASH, data);
  if (hashed && line.slice(0, HASH_LENGTH) !== expected) return lost;
  // The same method that wrote it, with its own fields (checked again) and its own time.
  writer.pinnedAt = typeof content.at === "string" ? content.at : undefined;
  try {
    const done = (writer[method as "sessionOpened"] as (record: unknown) => unknown).call(writer, content);
    // A replayed start is durable already; its promise settles with the next commit.
    if (done instanceof Promise) done.catch(() => undefined);
  } catch {
    return lost;
  } finally {
    writer.pinnedAt = undefined;
  }
  if (writer.state.session(sessionId)?.head === expected) return undefined;
  throw journalError(
    JOURNAL_ERRORS.DAMAGED,
    `journal tail log: record ${seq} of session ${JSON.stringify(sessionId)} did not rebuild to its stored hash; keep the -tail file and report this`,
    { sessionId, seq },
  );
}

function legacyFiles(file: string): [string, string] {
  return [`${file}-tail`, `${file}-tail.1`];
}

const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;
const SPACE = 0x20;
const CHECKSUM_MARK = 0x23;

/** A file's lines that may be replayed: every line of a write whose checksum holds, and, outside those, frame lines. */
function completeLines(file: string): string[] {
  let bytes: Buffer;
  try {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (stats === undefined) return [];
    // Checked before reading: a FIFO's read would wait for ever.
    if (!stats.isFile()) {
      throw journalError(
        JOURNAL_ERRORS.OPEN_FAILED,
        `journal tail log ${JSON.stringify(file)} is ${kindOf(stats)}, not a file: the writer reads a tail log left at that path before it opens, and the journal never puts anything else there: move it out of the way, then open the journal again`,
        { path: file, kind: kindOf(stats) },
      );
    }
    bytes = readFileSync(file);
  } catch (cause) {
    if (OpenWorkerError.isInstance(cause)) throw cause;
    const why = cause instanceof Error ? cause.message : String(cause);
    throw journalError(
      JOURNAL_ERRORS.OPEN_FAILED,
      `journal tail log ${JSON.stringify(file)}: cannot read it (${why}); check its permissions, then open the journal again`,
      { path: file },
      cause,
    );
  }
  const lines: string[] = [];
  let writeStart = 0;
  let unchecked: number[] = [];
  const keep = (framesOnly: boolean) => {
    for (let index = 0; index < unchecked.length; index += 2) {
      const start = unchecked[index]!;
      if (!framesOnly || (bytes[start + HASH_LENGTH] === SPACE && bytes[start + HASH_LENGTH + 1] === OPEN_BRACE))
        lines.push(bytes.toString("utf8", start, unchecked[index + 1]));
    }
    unchecked = [];
  };
  for (let start = 0, end = bytes.indexOf(NEWLINE); end !== -1; start = end + 1, end = bytes.indexOf(NEWLINE, start)) {
    if (bytes[start] !== CHECKSUM_MARK) {
      unchecked.push(start, end);
      continue;
    }
    keep(bytes.toString("latin1", start, end + 1) !== `#${crc32(bytes.subarray(writeStart, start)).toString(16).padStart(8, "0")}\n`);
    writeStart = end + 1;
  }
  keep(true);
  return lines;
}

function seqOf(line: string): number {
  try {
    const seq: unknown = (JSON.parse(line.charCodeAt(0) === OPEN_BRACE ? line : line.slice(HASH_LENGTH + 1)) as { seq?: unknown }).seq;
    return typeof seq === "number" ? seq : Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
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
