import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Journal, JOURNAL_ERRORS } from "../src/index.js";
import { approve, codeOf, openSession, request, startCall, temporaryFolder } from "./helpers.js";

let folder: ReturnType<typeof temporaryFolder>;
let journal: Journal;

beforeEach(() => {
  folder = temporaryFolder();
  journal = Journal.open({ path: folder.file("journal.db") });
  openSession(journal, "s1");
});

afterEach(() => {
  journal.close();
  folder.remove();
});

const DIGEST = `sha256:${"a".repeat(64)}`;
const asked = (callId: string, elicitation = 1) =>
  journal.callElicitationAsked({ sessionId: "s1", callId, elicitation, provider: "notes", mode: "form", message: "Which folder?", schemaDigest: DIGEST });

describe("elicitation records (M9)", () => {
  it("M9 A3 a started call's elicitations are chained between its start and its end, and the call's summary lists how each was answered", async () => {
    await startCall(journal, "s1", "c1");
    asked("c1");
    journal.callElicitationAnswered({ sessionId: "s1", callId: "c1", elicitation: 1, action: "accept", by: "person", who: "ana", contentDigest: DIGEST });
    journal.callElicitationAsked({
      sessionId: "s1",
      callId: "c1",
      elicitation: 2,
      provider: "notes",
      mode: "url",
      message: "Sign in",
      url: "https://id.example.test/x",
    });
    journal.callElicitationAnswered({
      sessionId: "s1",
      callId: "c1",
      elicitation: 2,
      action: "decline",
      by: "runtime",
      reason: "the call ended before an answer",
    });
    journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded" });
    await journal.flush();
    expect(journal.timeline({ sessionId: "s1", callId: "c1" }).map((record) => record.kind)).toEqual([
      "call_requested",
      "approval_decided",
      "call_started",
      "call_elicitation_asked",
      "call_elicitation_answered",
      "call_elicitation_asked",
      "call_elicitation_answered",
      "call_finished",
    ]);
    expect(journal.calls("s1")[0]!.elicitations).toEqual([
      { elicitation: 1, mode: "form", action: "accept", by: "person", who: "ana" },
      { elicitation: 2, mode: "url", action: "decline", by: "runtime" },
    ]);
    expect(journal.verify("s1").ok).toBe(true);
  });

  it("M9 A3 an elicitation outside a started call is refused: before its start, after its end", async () => {
    request(journal, "s1", "c1");
    approve(journal, "s1", "c1");
    expect(await codeOf(() => asked("c1"))).toBe(JOURNAL_ERRORS.CALL_NOT_STARTED);
    await journal.callStarted({ sessionId: "s1", callId: "c1" });
    journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded" });
    expect(await codeOf(() => asked("c1"))).toBe(JOURNAL_ERRORS.TERMINAL_EXISTS);
  });

  it("M9 a record with a bad field is refused, naming the field", async () => {
    await startCall(journal, "s1", "c1");
    expect(await codeOf(() => asked("c1", 0))).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    expect(() => journal.callElicitationAnswered({ sessionId: "s1", callId: "c1", elicitation: 1, action: "maybe" as never, by: "person" })).toThrow(
      /field "action" must be one of "accept", "decline", "cancel"/,
    );
    expect(() => journal.callElicitationAnswered({ sessionId: "s1", callId: "c1", elicitation: 1, action: "accept", by: "bot" as never })).toThrow(
      /field "by" must be one of "person", "host", "runtime"/,
    );
  });
});
