import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeLines, MAX_PIECE, readRecordLines } from "../src/tail-lines.js";

function bytes(lines: string[]): Buffer {
  return Buffer.from(lines.map((line) => `${line}\n`).join(""), "utf8");
}

describe("reading a group's lines back from the tail log (commit thread)", () => {
  it("A3 decodes lines across many pieces, multibyte characters and a line longer than a piece, exactly", () => {
    const lines = Array.from({ length: 2_000 }, (_, index) => `${index} ${"é€😀x".repeat(index % 37)} {"seq":${index}}`);
    lines.splice(700, 0, "big ".repeat(MAX_PIECE / 2)); // one line of 2 pieces' worth
    const buffer = bytes(lines);
    expect(buffer.length).toBeGreaterThan(MAX_PIECE * 3);
    expect(decodeLines(buffer, buffer.length)).toEqual(lines);
  });

  it("A3 bytes that do not end with a newline (a torn group) decode to nothing, so the thread fails the group", () => {
    const buffer = bytes(["one", "two"]);
    expect(decodeLines(buffer, buffer.length - 1)).toBeUndefined();
    expect(decodeLines(buffer, 0)).toEqual([]);
    expect(decodeLines(Buffer.from("\n\n"), 2)).toEqual(["", ""]);
  });

  it("A3 a group's byte range read from the file gives its records without the checksum lines, and a range past the file's end gives nothing", () => {
    const folder = mkdtempSync(path.join(tmpdir(), "tail-lines-"));
    const file = path.join(folder, "tail");
    const before = bytes(["older line"]);
    const group = bytes(['{"seq":1}', "#0a1b2c3d", '{"seq":2,"é":"😀"}', "#4e5f6a7b"]);
    writeFileSync(file, Buffer.concat([before, group]));
    const fd = openSync(file, "r");
    try {
      const buffer = Buffer.alloc(group.length);
      expect(readRecordLines(fd, before.length, group.length, buffer)).toEqual(['{"seq":1}', '{"seq":2,"é":"😀"}']);
      expect(readRecordLines(fd, before.length + 1, group.length, buffer)).toBeUndefined();
    } finally {
      closeSync(fd);
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
