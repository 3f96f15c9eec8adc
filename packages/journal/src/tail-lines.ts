// Strings in pieces on the journal's write path: the bound every piece keeps (also used
// by the tail log's writes and the frames of a busy session), and how the commit thread
// (or the writer, for a group whose thread stopped) reads a group's lines back from the
// tail log (see `journal-commit-worker.ts`), in its own module so that it can be tested
// without a worker.
import { readSync } from "node:fs";

/**
 * The most text the journal builds into one string on its write path (bytes decoded here,
 * characters joined for a tail-log write or a frame body): well below V8's large-object
 * threshold (about 128 KB), past which each string is its own mapped chunk and costs
 * about ten times as much per byte to build. Decoding a whole group (130–190 KB with
 * session ids of 9 characters or more) into one string took 574 ms for 1,000 groups
 * against 62 ms in pieces, and the writer waited for the commit thread; joining 1,024
 * tail-log lines (243 KB) for one write took 1.6 ms against 0.16–0.2 ms in pieces.
 */
export const MAX_PIECE = 64 * 1024;
/** The first byte of the checksum line that ends each tail-log write (`#` and its CRC-32, see `TailLog`). */
export const CHECKSUM_MARK = 0x23;
const NEWLINE = 0x0a;

/**
 * The newline-ended lines of `buffer`'s first `length` bytes, decoded in pieces of at most
 * {@link MAX_PIECE} bytes cut at line ends (a longer line is one piece);
 * `undefined` if the bytes do not end with a newline.
 */
export function decodeLines(buffer: Buffer, length: number): string[] | undefined {
  if (length === 0) return [];
  if (buffer[length - 1] !== NEWLINE) return undefined;
  const lines: string[] = [];
  for (let start = 0; start < length; ) {
    let end = Math.min(start + MAX_PIECE, length);
    if (end < length) {
      const last = buffer.lastIndexOf(NEWLINE, end - 1);
      end = last >= start ? last + 1 : buffer.indexOf(NEWLINE, end) + 1;
    }
    const piece = buffer.toString("utf8", start, end - 1).split("\n");
    for (const line of piece) lines.push(line);
    start = end;
  }
  return lines;
}

/**
 * The record lines of a tail-log file's bytes `[start, start + length)`, read through `fd`
 * into `buffer` (at least `length` bytes) and decoded as {@link decodeLines} does, without
 * the checksum line that ends each write; `undefined` if fewer bytes could be read or they
 * do not end with a complete line. The commit thread reads each group so, and the writer
 * a queued group whose thread stopped before taking it.
 */
export function readRecordLines(fd: number, start: number, length: number, buffer: Buffer): string[] | undefined {
  let read = 0;
  while (read < length) {
    const got = readSync(fd, buffer, read, length - read, start + read);
    if (got === 0) return undefined;
    read += got;
  }
  return decodeLines(buffer, length)?.filter((line) => line.charCodeAt(0) !== CHECKSUM_MARK);
}
