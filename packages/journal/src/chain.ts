import { hash } from "node:crypto";

/** The `prevHash` of a session's first record. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * The link of a record in its session's chain: hex SHA-256 of the previous record's
 * hash followed by the record's canonical JSON (`data`), exactly as stored.
 */
export function chainHash(prevHash: string, data: string): string {
  return hash("sha256", prevHash + data, "hex");
}

/** The length of a frame line's hash (hex SHA-256), before its space and record. */
export const HASH_LENGTH = 64;

/** Whether a queued or tail-log line is a record without its hash (bare canonical JSON of an object). */
export function isBareLine(line: string): boolean {
  return line.charCodeAt(0) === 0x7b;
}

/**
 * A session's queued lines as frame lines, in place and in order, from the chain's `head`
 * before them: a bare line is hashed onto the chain, and a frame line (hashed when it
 * was queued) moves the head to its hash. Returns the head after them. Throws if a bare
 * line comes while the head is unknown (`whose` names the session for that message).
 */
export function chainLines(head: string | undefined, lines: string[], whose: string): string | undefined {
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (!isBareLine(line)) {
      head = line.slice(0, HASH_LENGTH);
      continue;
    }
    if (head === undefined) throw new Error(`a record of ${whose} came without its hash, and the chain head it continues was never given`);
    head = chainHash(head, line);
    lines[index] = `${head} ${line}`;
  }
  return head;
}
