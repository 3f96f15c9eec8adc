import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TailLog } from "../src/tail-log.js";
import { temporaryFolderPerTest } from "./helpers.js";

const folder = temporaryFolderPerTest();

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
      const text = readFileSync(tail.paths[0], "utf8");
      expect(text).toBe(`${expected.join("\n")}\n`);
      const range = tail.groupRange(new Int32Array(expected.length));
      expect(range).toMatchObject({ file: 0, start: 0, end: Buffer.byteLength(text) });
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
      const text = readFileSync(tail.paths[0], "utf8");
      expect(text).toBe(`${expected.join("\n")}\n`);
      expect(text.split("\n").filter((line) => line === "")).toHaveLength(1); // only after the last line's feed
      expect(tail.groupRange(new Int32Array(16)).end).toBe(Buffer.byteLength(text));
    } finally {
      tail.close(true);
    }
  });
});
