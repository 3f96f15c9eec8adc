import { closeSync, openSync, readFileSync, rmSync, type Stats, statSync, writeSync } from "node:fs";
import { crc32 } from "node:zlib";
import { HASH_LENGTH, isBareLine } from "./chain.js";
import type { TailLines } from "./commit-thread.js";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import { kindOf } from "./journal-path.js";
import { CHECKSUM_MARK, MAX_PIECE, readRecordLines } from "./tail-lines.js";

/**
 * The tail log (`<journal>-tail`, grouped durability only): where records queued for the
 * next group commit are written, in one `write()`, the moment a `callStarted` needs them
 * to be durable. A `write()` that returned has reached the operating system, so the
 * record survives a process crash (kill -9) exactly like a WAL commit with
 * `synchronous=NORMAL`, at a tenth of the cost (~3 µs against ~25–100 µs here): the tool
 * starts without waiting for SQLite. The group commit then writes the same lines into
 * frames as before; once committed they are redundant.
 *
 * A line is a frame line (`hash + " " + canonical JSON`), or, while the commit thread
 * hashes the records (see `GroupCommit.hashOnThread`), the canonical JSON alone; the JSON
 * names the session and `seq`. Every `write()` ends with a checksum line (`#` and the
 * hex CRC-32 of the write's bytes before it): a line without its hash counts only when
 * its write's checksum holds. Opening the journal replays the lines the database lacks
 * (see `Journal.open`), so what a crash left only here is committed before recovery
 * looks for open calls.
 *
 * Two files, `<journal>-tail` and `<journal>-tail.1`, are written *in place*: once the
 * current one passes {@link SWITCH_BYTES}, writing moves to the start of the other,
 * overwriting what it held, as soon as every line in it is committed. Overwriting pages
 * the file already has costs about half of appending to a file that is emptied now and
 * then (measured: 4 µs against 7–8 µs per 16 KB write here), and needs no `ftruncate` or
 * `unlink`. What lies past a file's write position is older lines, all committed; replay
 * skips them (their `seq` is behind the file) exactly as it skips any committed line, and
 * a line torn by a crash, or glued to older bytes, fails its hash or its write's
 * checksum and is skipped too.
 * With a commit thread, lines are committed later than they are written: a file is free
 * again once the groups posted before the switch are committed (see `GroupCommit`).
 * Both files are removed when the journal closes.
 */
export class TailLog {
  private readonly fds: [number, number];
  private current = 0;
  /** Where the next write goes in the current file. */
  private position = 0;
  /** Where the lines of the group being queued begin (see {@link groupRange}). */
  private groupStart = 0;
  /** Whether the other file still holds lines on their way to a commit. */
  private otherBusy = false;
  /** Where a write's bytes are encoded and checksummed: room for `MAX_PIECE` characters. */
  private readonly buffer = Buffer.alloc(MAX_PIECE * 3 + CHECKSUM_LINE_BYTES);

  private constructor(
    private readonly file: string,
    fds: [number, number],
  ) {
    this.fds = fds;
  }

  /** Opens (creating) both files, empty: call after their lines were replayed. */
  static open(file: string): TailLog {
    const fds: number[] = [];
    try {
      for (const name of names(file)) {
        fds.push(openSync(name, "w"));
      }
      return new TailLog(file, fds as [number, number]);
    } catch (cause) {
      for (const fd of fds) closeSync(fd);
      throw journalError(
        JOURNAL_ERRORS.OPEN_FAILED,
        `journal tail log ${JSON.stringify(file)}: cannot open it for writing (${cause instanceof Error ? cause.message : String(cause)}); check the folder's permissions`,
        { path: file },
        cause,
      );
    }
  }

  /**
   * The complete lines a previous writer left in both files, in replay order: by `seq`
   * (each session's records in chain order; sessions are independent), file order among
   * equals. Lines that do not parse come last (replay refuses them). None without files.
   * A file that cannot be read (a directory or a FIFO at its path, no permission) is
   * `JOURNAL_OPEN_FAILED`, naming it and what to do.
   */
  static read(file: string): string[] {
    const lines = names(file).flatMap(completeLines);
    const keyed = lines.map((line, index) => ({ line, index, seq: seqOf(line) }));
    keyed.sort((a, b) => a.seq - b.seq || a.index - b.index);
    return keyed.map((entry) => entry.line);
  }

  /** Removes both files (strict durability keeps none). */
  static remove(file: string): void {
    for (const name of names(file)) rmSync(name, { force: true });
  }

  /** The paths of both files, by index. */
  get paths(): [string, string] {
    return names(this.file);
  }

  /**
   * Where the lines written since the last {@link nextGroup} lie (which file, and the byte
   * range), with the session `refs` of those lines. Every line of a group is written before the group is posted, one group after
   * the other, and writing moves to another file or position only between groups, so a
   * group's lines are exactly this range (the commit thread reads them from there).
   */
  groupRange(refs: Int32Array): TailLines {
    return { file: this.current, start: this.groupStart, end: this.position, refs };
  }

  /**
   * The lines of {@link groupRange}, read back from the file (the writer's own copy of
   * them is gone once the commit thread takes groups; see `GroupCommit`), without the
   * checksum lines. Throws if the range does not end with a complete line.
   */
  readGroup(): string[] {
    const length = this.position - this.groupStart;
    const fd = openSync(names(this.file)[this.current]!, "r");
    let lines: string[] | undefined;
    try {
      lines = readRecordLines(fd, this.groupStart, length, Buffer.allocUnsafe(length));
    } finally {
      closeSync(fd);
    }
    if (lines === undefined) throw new Error(`the tail log's ${length} bytes of the queued group could not be read back as complete lines`);
    return lines;
  }

  /** The next group's lines begin here. */
  nextGroup(): void {
    this.groupStart = this.position;
  }

  /**
   * Writes lines at the current position, in one `write()` per `MAX_PIECE` characters
   * of text (see `tail-lines.ts`) (one for everything but the largest batches), and empties `lines` (it takes
   * them). Throws if a write fails.
   */
  append(lines: string[]): void {
    let from = 0;
    let chars = 0;
    for (let index = 0; index < lines.length; index += 1) {
      chars += lines[index]!.length + 1;
      if (chars >= MAX_PIECE) {
        this.write(lines, from, index + 1);
        from = index + 1;
        chars = 0;
      }
    }
    if (from < lines.length) this.write(lines, from, lines.length);
    lines.length = 0;
  }

  /**
   * Writes `lines[from..to)` and their checksum line in one `write()`. Their text is one
   * flat string (a trailing empty line makes `join` end it with its newline; appending
   * "\n" would build a second copy), encoded into the log's own buffer, checksummed there
   * and written from it. A short write, rare on a regular file, is finished.
   */
  private write(lines: string[], from: number, to: number): void {
    const whole = from === 0 && to === lines.length;
    const part = whole ? lines : lines.slice(from, to);
    part.push("");
    const text = part.join("\n");
    // The caller's array must not keep the empty line: `append` goes on reading it, and a
    // piece that ended exactly at its last line used to write a stray blank line the
    // commit thread then counted as one line too many (JOURNAL_WRITE_FAILED under load).
    if (whole) lines.pop();
    const fd = this.fds[this.current]!;
    // UTF-8 takes at most three bytes a UTF-16 unit; the checksum line, ten. A write
    // larger than the kept buffer (one record over `MAX_PIECE`) gets one of its own.
    const most = text.length * 3 + CHECKSUM_LINE_BYTES;
    const buffer = most <= this.buffer.length ? this.buffer : Buffer.allocUnsafe(most);
    const bytes = buffer.write(text, 0, "utf8");
    const length = bytes + buffer.write(checksumLine(buffer, 0, bytes), bytes, "latin1");
    let written = 0;
    while (written < length) written += writeSync(fd, buffer, written, length - written, this.position + written);
    this.position += length;
  }

  /** Whether the current file has passed {@link SWITCH_BYTES}: time to move to the other. */
  get large(): boolean {
    return this.position >= SWITCH_BYTES;
  }

  /** Whether the other file still holds lines on their way to a commit (see {@link switchFiles}). */
  get switched(): boolean {
    return this.otherBusy;
  }

  /**
   * Every line written so far is committed: writing starts over at the beginning of the
   * current file once it is large, and the other file is free.
   */
  committedAll(): void {
    this.otherBusy = false;
    if (this.large) this.position = 0;
    this.groupStart = this.position;
  }

  /**
   * Moves writing to the start of the other file while the current one's lines are on
   * their way to a commit ({@link otherCommitted} frees it). Only when the other file is
   * free; otherwise the current one goes on growing.
   */
  switchFiles(): void {
    if (this.otherBusy) return;
    this.current = 1 - this.current;
    this.position = 0;
    this.groupStart = 0;
    this.otherBusy = true;
  }

  /** The lines of the file writing moved away from are committed: it may be overwritten. */
  otherCommitted(): void {
    this.otherBusy = false;
  }

  /** Closes both files: removed when everything is committed, else kept for the next open to replay. */
  close(committed: boolean): void {
    for (const fd of this.fds) closeSync(fd);
    if (committed) TailLog.remove(this.file);
  }
}

/** How far a file is written before writing moves to the other one. */
const SWITCH_BYTES = 4 << 20;

function names(file: string): [string, string] {
  return [file, `${file}.1`];
}

/** `#` and eight hex digits of CRC-32, and the newline. */
const CHECKSUM_LINE_BYTES = 10;
const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;
const SPACE = 0x20;

/** The checksum line of `bytes[start..end)`. */
function checksumLine(bytes: Buffer, start: number, end: number): string {
  return `#${crc32(bytes.subarray(start, end)).toString(16).padStart(8, "0")}\n`;
}

/**
 * The lines of a tail-log file that may be replayed: every line of a write whose
 * checksum line holds, and, outside those, lines shaped as frame lines (they carry their
 * hash, which replay checks against the chain; a file written before checksums has only
 * those). Any other line outside a checked write is torn, or older bytes: left out.
 */
function completeLines(file: string): string[] {
  let bytes: Buffer;
  try {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (stats === undefined) return [];
    // Checked before reading: a FIFO's read would wait for ever.
    if (!stats.isFile()) throw notAFile(file, stats);
    bytes = readFileSync(file);
  } catch (cause) {
    if ((cause as { code?: unknown }).code === JOURNAL_ERRORS.OPEN_FAILED) throw cause;
    throw journalError(
      JOURNAL_ERRORS.OPEN_FAILED,
      `journal tail log ${JSON.stringify(file)}: cannot read it (${cause instanceof Error ? cause.message : String(cause)}); check its permissions, then open the journal again`,
      { path: file },
      cause,
    );
  }
  const lines: string[] = [];
  /** Where the current write began, and the lines seen since, as `[start, end)` offsets. */
  let writeStart = 0;
  let unchecked: number[] = [];
  const keepHashed = () => {
    for (let index = 0; index < unchecked.length; index += 2) {
      const start = unchecked[index]!;
      if (bytes[start + HASH_LENGTH] === SPACE && bytes[start + HASH_LENGTH + 1] === OPEN_BRACE) lines.push(bytes.toString("utf8", start, unchecked[index + 1]));
    }
    unchecked = [];
  };
  for (let start = 0, end = bytes.indexOf(NEWLINE); end !== -1; start = end + 1, end = bytes.indexOf(NEWLINE, start)) {
    if (bytes[start] !== CHECKSUM_MARK) {
      unchecked.push(start, end);
      continue;
    }
    if (bytes.toString("latin1", start, end + 1) === checksumLine(bytes, writeStart, start)) {
      for (let index = 0; index < unchecked.length; index += 2) lines.push(bytes.toString("utf8", unchecked[index], unchecked[index + 1]));
      unchecked = [];
    } else keepHashed();
    writeStart = end + 1;
  }
  keepHashed();
  return lines;
}

/** The `seq` a line's record claims, or `Infinity` if the line does not parse. */
function seqOf(line: string): number {
  try {
    const json = isBareLine(line) ? line : line.slice(line.indexOf(" ") + 1);
    const seq: unknown = (JSON.parse(json) as { seq?: unknown }).seq;
    return typeof seq === "number" ? seq : Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function notAFile(file: string, stats: Stats) {
  return journalError(
    JOURNAL_ERRORS.OPEN_FAILED,
    `journal tail log ${JSON.stringify(file)} is ${kindOf(stats)}, not a file: the writer keeps its tail log at that path and must read it before it opens. The journal never puts anything else there: move it out of the way, then open the journal again`,
    { path: file, kind: kindOf(stats) },
  );
}
