// How the commit thread reads a group's lines back from the tail log (see
// `journal-commit-worker.ts`); its own module so that it can be tested without a worker.

/**
 * The most bytes decoded into one string: well below V8's large-object threshold (about
 * 128 KB), past which each string is its own mapped chunk. Decoding a whole group (130–190
 * KB with session ids of 9 characters or more) into one string cost ten times as much as
 * decoding the same bytes in pieces (measured: 574 against 62 ms for 1,000 groups), and
 * the writer waited for this thread: 32 writers with session ids like "grouped-7" did
 * 170,000–200,000 records/s instead of 230,000–260,000.
 */
export const DECODE_CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * The newline-ended lines of `buffer`'s first `length` bytes, decoded in pieces of at most
 * {@link DECODE_CHUNK_BYTES} cut at line ends (a longer line is one piece);
 * `undefined` if the bytes do not end with a newline.
 */
export function decodeLines(buffer: Buffer, length: number): string[] | undefined {
  if (length === 0) return [];
  if (buffer[length - 1] !== NEWLINE) return undefined;
  const lines: string[] = [];
  for (let start = 0; start < length; ) {
    let end = Math.min(start + DECODE_CHUNK_BYTES, length);
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
