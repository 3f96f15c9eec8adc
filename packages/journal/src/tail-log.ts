import { closeSync, openSync, readFileSync, rmSync, type Stats, statSync, writeSync } from "node:fs";
import type { TailLines } from "./commit-thread.js";
import { JOURNAL_ERRORS, journalError } from "./errors.js";
import { kindOf } from "./journal-path.js";
import { MAX_PIECE } from "./tail-lines.js";

/**
 * The tail log (`<journal>-tail`, grouped durability only): where records queued for the
 * next group commit are written, in one `write()`, the moment a `callStarted` needs them
 * to be durable. A `write()` that returned has reached the operating system, so the
 * record survives a process crash (kill -9) exactly like a WAL commit with
 * `synchronous=NORMAL`, at a tenth of the cost (~3 µs against ~25–100 µs here): the tool
 * starts without waiting for SQLite. The group commit then writes the same lines into
 * frames as before; once committed they are redundant.
 *
 * A line is a frame line (`hash + " " + canonical JSON`); the JSON names the session and
 * `seq`. Opening the journal replays the lines the database lacks (see `Journal.open`),
 * so what a crash left only here is committed before recovery looks for open calls.
 *
 * Two files, `<journal>-tail` and `<journal>-tail.1`, are written *in place*: once the
 * current one passes {@link SWITCH_BYTES}, writing moves to the start of the other,
 * overwriting what it held, as soon as every line in it is committed. Overwriting pages
 * the file already has costs about half of appending to a file that is emptied now and
 * then (measured: 4 µs against 7–8 µs per 16 KB write here), and needs no `ftruncate` or
 * `unlink`. What lies past a file's write position is older lines, all committed; replay
 * skips them (their `seq` is behind the file) exactly as it skips any committed line, and
 * a line torn by a crash, or glued to older bytes, fails its hash and is skipped too.
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
   * Writes `lines[from..to)` in one `write()`. Their text is one flat string (a trailing
   * empty line makes `join` end it with its newline; appending "\n" would build a second
   * copy), passed to `write()` as it is: no `Buffer` of our own, no external memory for
   * the collector to account. A short write, rare on a regular file, finishes from bytes.
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
    const length = Buffer.byteLength(text, "utf8");
    let written = writeSync(fd, text, this.position, "utf8");
    if (written < length) {
      const buffer = Buffer.from(text, "utf8");
      while (written < length) written += writeSync(fd, buffer, written, length - written, this.position + written);
    }
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

function completeLines(file: string): string[] {
  let text: string;
  try {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (stats === undefined) return [];
    // Checked before reading: a FIFO's read would wait for ever.
    if (!stats.isFile()) throw notAFile(file, stats);
    text = readFileSync(file, "utf8");
  } catch (cause) {
    if ((cause as { code?: unknown }).code === JOURNAL_ERRORS.OPEN_FAILED) throw cause;
    throw journalError(
      JOURNAL_ERRORS.OPEN_FAILED,
      `journal tail log ${JSON.stringify(file)}: cannot read it (${cause instanceof Error ? cause.message : String(cause)}); check its permissions, then open the journal again`,
      { path: file },
      cause,
    );
  }
  const end = text.lastIndexOf("\n");
  return end < 0 ? [] : text.slice(0, end).split("\n");
}

/** The `seq` a line's record claims, or `Infinity` if the line does not parse. */
function seqOf(line: string): number {
  try {
    const seq: unknown = (JSON.parse(line.slice(line.indexOf(" ") + 1)) as { seq?: unknown }).seq;
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
