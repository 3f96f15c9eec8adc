import { describe, expect, it } from "vitest";
import { decodeLines, MAX_PIECE } from "../src/tail-lines.js";

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
});
