import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { Terminal } from "../src/cli/terminal.js";
import { terminalApprover, type Prompter } from "../src/setup/approver.js";

const ESC = "\u001b";
const CSI = "\u009b";

function terminal(options: { tty: boolean; stderrTty?: boolean }) {
  const stdout = Object.assign(new PassThrough(), { isTTY: options.tty });
  const stderr = Object.assign(new PassThrough(), { isTTY: options.stderrTty ?? options.tty });
  const written = { stdout: "", stderr: "" };
  stdout.on("data", (chunk: Buffer) => (written.stdout += chunk.toString()));
  stderr.on("data", (chunk: Buffer) => (written.stderr += chunk.toString()));
  return { terminal: new Terminal({ stdout, stderr }, { json: false, env: {} }), written };
}

/** The control characters of `text` other than line feed. */
const controls = (text: string) => [...text].filter((char) => char !== "\n" && (char < " " || (char >= "\u007f" && char <= "\u009f")));

describe("terminal output of untrusted text (E6)", () => {
  it("E6 text carrying the CLI's own colour codes is shown escaped on a colour terminal; the CLI's colours pass", () => {
    const { terminal: out, written } = terminal({ tty: true });
    const untrusted = `${ESC}[31mnot an error${ESC}[39m ${ESC}[2J`;
    out.line(`${out.paint("green", "succeeded")}: ${untrusted}`);
    out.note(`${out.paint("dim", "note")} ${untrusted}`);
    for (const text of [written.stdout, written.stderr]) {
      expect(text).toContain(`\\u001b[31mnot an error\\u001b[39m \\u001b[2J`);
      expect(text).not.toContain(`${ESC}[31m`);
      expect(text).not.toContain(`${ESC}[2J`);
    }
    expect(written.stdout).toContain(`${ESC}[32msucceeded${ESC}[39m`);
    expect(written.stderr).toContain(`${ESC}[2mnote${ESC}[22m`);
    // The marks `paint` writes stay private: none reaches either stream.
    expect(written.stdout).not.toContain("\u0000");
    expect(written.stderr).not.toContain("\u0000");
  });

  it("E6 a NUL and an SGR code in untrusted text cannot pass for the terminal's mark", () => {
    const { terminal: out, written } = terminal({ tty: true });
    out.line(`\u000031m \u0000A31m ${out.paint("red", "x")}`);
    expect(written.stdout).toBe(`\\u000031m \\u0000A31m ${ESC}[31mx${ESC}[39m\n`);
  });

  it("E6 without colour on a stream, painted text is plain there and untrusted codes are escaped", () => {
    const { terminal: out, written } = terminal({ tty: true, stderrTty: false });
    out.note(`${out.paint("yellow", "warning")} ${ESC}[33mfake`);
    expect(written.stderr).toBe("warning \\u001b[33mfake\n");
    const plain = terminal({ tty: false });
    plain.terminal.line(`${plain.terminal.paint("red", "x")} ${ESC}[31m`);
    expect(plain.written.stdout).toBe("x \\u001b[31m\n");
  });

  it("E6 the approval prompt (written by readline, not the terminal) escapes a tool's arguments, C1 controls included", async () => {
    const { terminal: out } = terminal({ tty: true });
    let asked = "";
    const prompter: Prompter = {
      question: async (text) => {
        asked = text;
        return "n";
      },
    };
    const approve = terminalApprover("ask", out, () => prompter);
    const answer = await approve({
      sessionId: "ses_1",
      turnId: "t1",
      callId: "c1",
      qualifiedName: "demo.sneaky",
      alias: "demo__sneaky",
      kind: "native",
      classification: "External",
      // JSON.stringify escapes C0 controls but leaves C1 (U+0080–U+009F) as they are.
      args: { text: `${CSI}2J${CSI}31m` },
      signal: new AbortController().signal,
    });
    expect(answer.approved).toBe(false);
    expect(asked).toContain("\\u009b2J\\u009b31m");
    expect(controls(asked).filter((char) => char !== ESC)).toEqual([]);
    // Its own colours remain: yellow "approve", bold name.
    expect(asked).toContain(`${ESC}[33mapprove${ESC}[39m`);
  });
});
