import { PassThrough } from "node:stream";
import type { ElicitationRequest } from "@openworker/runtime";
import { describe, expect, it } from "vitest";
import { Terminal } from "../src/cli/terminal.js";
import type { Prompter } from "../src/setup/approver.js";
import { terminalElicitor } from "../src/setup/elicitor.js";

function setup(answers: (string | undefined)[]) {
  const stderr = Object.assign(new PassThrough(), { isTTY: false });
  let noted = "";
  stderr.on("data", (chunk: Buffer) => (noted += chunk.toString()));
  const terminal = new Terminal({ stdout: new PassThrough(), stderr }, { json: false, env: {} });
  const asked: string[] = [];
  const prompter: Prompter = {
    question: async (text) => {
      asked.push(text);
      return answers.shift();
    },
  };
  return { elicitor: terminalElicitor(terminal, () => prompter), asked, noted: () => noted };
}

const request = (overrides: Partial<ElicitationRequest> = {}): ElicitationRequest => ({
  sessionId: "ses_1",
  turnId: "ses_1.t1",
  callId: "call-1",
  qualifiedName: "notes.archive",
  provider: "notes",
  mode: "form",
  message: "Archive which?",
  requestedSchema: {
    type: "object",
    properties: {
      folder: { type: "string", enum: ["inbox", "old"] },
      keep: { type: "integer" },
      tags: { type: "array", items: { type: "string", enum: ["a", "b"] } },
      notify: { type: "boolean" },
    },
    required: ["folder"],
  },
  signal: new AbortController().signal,
  ...overrides,
});

describe("the terminal elicitor", () => {
  it("M9 asks a form field by field, asks again after a value that does not fit, and skips optional fields left empty", async () => {
    const { elicitor, asked, noted } = setup(["y", "", "archive", "old", "2.5", "3", "a, b", ""]);
    expect(await elicitor(request())).toEqual({ action: "accept", content: { folder: "old", keep: 3, tags: ["a", "b"] }, who: "terminal user" });
    expect(asked[0]).toContain("asks notes (during notes.archive): Archive which?");
    expect(asked.filter((text) => text.includes("folder (inbox|old)"))).toHaveLength(3);
    expect(noted()).toContain("folder: required");
    expect(noted()).toContain("keep: expected (integer)");
  });

  it("M9 declines when the person says no, and for the host when the input ends or there is no terminal", async () => {
    expect(await setup(["n"]).elicitor(request())).toMatchObject({ action: "decline", who: "terminal user" });
    expect(await setup(["y", undefined]).elicitor(request())).toMatchObject({ action: "decline", decidedBy: "host", reason: "stdin ended before an answer" });
    const stderr = new PassThrough();
    const none = terminalElicitor(new Terminal({ stdout: new PassThrough(), stderr }, { json: false, env: {} }), undefined);
    expect(await none(request())).toMatchObject({ action: "decline", decidedBy: "host", who: "cli", reason: "no terminal to ask" });
  });

  it("M9 a URL request shows the URL and accepts without content once the person says done", async () => {
    const { elicitor, asked } = setup(["y"]);
    expect(await elicitor(request({ mode: "url", url: "https://id.example.test/consent" }))).toEqual({ action: "accept", who: "terminal user" });
    expect(asked[0]).toContain("open https://id.example.test/consent");
  });
});
