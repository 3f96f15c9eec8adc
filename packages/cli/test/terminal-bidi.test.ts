import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { Terminal } from "../src/cli/terminal.js";

const BIDI = ["\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"];

function terminal() {
  const stdout = Object.assign(new PassThrough(), { isTTY: true });
  const stderr = Object.assign(new PassThrough(), { isTTY: true });
  const written = { stdout: "", stderr: "" };
  stdout.on("data", (chunk: Buffer) => (written.stdout += chunk.toString()));
  stderr.on("data", (chunk: Buffer) => (written.stderr += chunk.toString()));
  return { terminal: new Terminal({ stdout, stderr }, { json: false, env: {} }), written };
}

describe("terminal output of text with bidirectional controls (E6)", () => {
  it("E6 bidi controls in result lines and notes are shown escaped, never raw", () => {
    const { terminal: out, written } = terminal();
    out.line(`invoice \u202Efdp.exe`);
    out.note(`note ${BIDI.join("")}`);
    expect(written.stdout).toBe("invoice \\u202efdp.exe\n");
    for (const char of BIDI) {
      expect(written.stdout + written.stderr).not.toContain(char);
      expect(written.stderr).toContain(`\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
    }
  });

  it("E6 a JSON document carries bidi and C1 controls as \\u escapes: the same value, nothing raw", () => {
    const { terminal: out, written } = terminal();
    const value = { name: `a\u202Eb\u0085c\u2066`, [`k\u200f`]: 1 };
    out.printJson(value);
    expect(written.stdout).not.toMatch(/[\u0085\u200f\u202e\u2066]/);
    expect(written.stdout).toContain("a\\u202eb\\u0085c\\u2066");
    expect(JSON.parse(written.stdout)).toEqual(value);
  });
});
