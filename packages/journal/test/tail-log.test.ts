import { readFileSync, writeFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { chainHash, GENESIS_HASH } from "../src/chain.js";
import { TailLog } from "../src/tail-log.js";
import { temporaryFolderPerTest } from "./helpers.js";

const folder = temporaryFolderPerTest();

/** The lines of a tail-log file's text, its writes' checksum lines left out, after checking each against its write's bytes. */
function checkedLines(bytes: Buffer): string[] {
  const lines: string[] = [];
  let writeStart = 0;
  for (let start = 0, end = bytes.indexOf(10); end !== -1; start = end + 1, end = bytes.indexOf(10, start)) {
    const line = bytes.toString("utf8", start, end);
    if (!line.startsWith("#")) {
      lines.push(line);
      continue;
    }
    expect(line).toBe(`#${crc32(bytes.subarray(writeStart, start)).toString(16).padStart(8, "0")}`);
    writeStart = end + 1;
  }
  expect(writeStart, "the file ends with a checksum line").toBe(bytes.length);
  return lines;
}

/** A record's canonical JSON as the writer queues it for the commit thread to hash (no hash). */
const bare = (seq: number, kind = "call_progress") => `{"at":"2026-11-30T00:00:00.000Z","kind":"${kind}","note":"a b","seq":${seq},"sessionId":"s1"}`;

describe("tail log writes", () => {
  it("A3 a batch larger than a piece is written whole and in order, and the group's byte range covers all of it", () => {
    const file = folder.file("journal.db-tail");
    const tail = TailLog.open(file);
    try {
      // 1,000 lines of ~300 characters (~300 KB: several pieces), one line of 100 KB, non-ASCII.
      const lines = Array.from({ length: 1_000 }, (_, index) => `${String(index).padStart(4, "0")} ${"ü".repeat(150)}${"x".repeat(150)}`);
      lines.splice(500, 0, "big".repeat(33_000));
      const expected = [...lines];
      tail.append(lines);
      expect(lines).toEqual([]); // taken
      const bytes = readFileSync(tail.paths[0]);
      expect(checkedLines(bytes)).toEqual(expected);
      const range = tail.groupRange(new Int32Array(expected.length));
      expect(range).toMatchObject({ file: 0, start: 0, end: bytes.length });
    } finally {
      tail.close(true);
    }
  });

  it("A3 a batch whose piece ends exactly at its last line is written with no stray blank line", () => {
    const file = folder.file("journal.db-tail");
    const tail = TailLog.open(file);
    try {
      // 16 lines of 4,095 characters: with their line feeds, exactly one 64 Ki-character piece.
      const lines = Array.from({ length: 16 }, (_, index) => `${String(index).padStart(2, "0")}${"x".repeat(4_093)}`);
      const expected = [...lines];
      tail.append(lines);
      const bytes = readFileSync(tail.paths[0]);
      expect(checkedLines(bytes)).toEqual(expected); // no stray blank line among them
      expect(bytes.toString("utf8").split("\n").filter((line) => line === "")).toHaveLength(1); // only after the last line's feed
      expect(tail.groupRange(new Int32Array(16)).end).toBe(bytes.length);
    } finally {
      tail.close(true);
    }
  });
});

describe("tail log reads (replay)", () => {
  it("A3 records written without their hash count only when their write's checksum holds: a torn write's are left out, frame lines kept", () => {
    const file = folder.file("journal.db-tail");
    const tail = TailLog.open(file);
    const hashed = `${chainHash(GENESIS_HASH, bare(3))} ${bare(3)}`;
    tail.append([bare(1), bare(2)]);
    tail.append([hashed, bare(4)]);
    tail.close(false);
    expect(TailLog.read(file)).toEqual([bare(1), bare(2), hashed, bare(4)]);

    // A crash tore the second write: its checksum line never reached the file.
    const bytes = readFileSync(file);
    const torn = bytes.subarray(0, bytes.lastIndexOf("#"));
    writeFileSync(file, torn);
    expect(TailLog.read(file)).toEqual([bare(1), bare(2), hashed]);

    // One byte of the second write changed (glued to older bytes, say): its checksum fails.
    const changed = Buffer.from(bytes);
    changed[changed.indexOf(bare(4)) + bare(4).indexOf("a b") + 1] = 0x5f;
    writeFileSync(file, changed);
    expect(TailLog.read(file)).toEqual([bare(1), bare(2), hashed]);
  });

  it("A3 older writes past the write position after the file was reused: a partial write's lines are left out, and lines are ordered by seq", () => {
    const file = folder.file("journal.db-tail");
    const first = TailLog.open(file);
    first.append([bare(10), bare(11), bare(12)]);
    first.close(false);
    const old = readFileSync(file);
    const second = TailLog.open(file);
    second.append([bare(1)]);
    second.close(false);
    const fresh = readFileSync(file);
    // Writing started over at the file's start: what lies past the new write is the older
    // write's tail, starting mid-line, and its checksum (over bytes not all there) fails.
    writeFileSync(file, Buffer.concat([fresh, old.subarray(fresh.length)]));
    expect(TailLog.read(file)).toEqual([bare(1)]);
    // Aligned older writes that are whole still check (replay then skips them as committed).
    writeFileSync(file, Buffer.concat([fresh, old]));
    expect(TailLog.read(file)).toEqual([bare(1), bare(10), bare(11), bare(12)]);
  });

  it("A3 a tail log written before checksums (frame lines only) is still read", () => {
    const file = folder.file("journal.db-tail");
    const lines = [1, 2].map((seq) => `${chainHash(GENESIS_HASH, bare(seq))} ${bare(seq)}`);
    writeFileSync(file, `${lines.join("\n")}\n`);
    expect(TailLog.read(file)).toEqual(lines);
  });
});
