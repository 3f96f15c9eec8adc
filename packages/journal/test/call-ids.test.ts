import { describe, expect, it } from "vitest";
import { callIdHash } from "../src/call-id-hashes.js";
import { Journal, JOURNAL_ERRORS } from "../src/index.js";
import { approve, codeOf, completeCall, openSession, request, temporaryFolderPerTest } from "./helpers.js";

const folder = temporaryFolderPerTest();

/** Two different call ids with the same 32-bit hash (a birthday search over generated ids). */
function collidingIds(): [string, string] {
  const seen = new Map<number, string>();
  for (let index = 0; ; index += 1) {
    const id = `call-${index}`;
    const hash = callIdHash(id);
    const earlier = seen.get(hash);
    if (earlier !== undefined) return [earlier, id];
    seen.set(hash, id);
  }
}

describe("ended call ids are kept as hashes (A3: ids unique within their session)", () => {
  it("A3 an id whose hash matches an ended call is still accepted; the ended id itself is refused", async () => {
    const [first, second] = collidingIds();
    expect(callIdHash(first)).toBe(callIdHash(second));
    const journal = Journal.open({ path: folder.file("ids.db") });
    try {
      openSession(journal, "s1");
      await completeCall(journal, "s1", first);
      // Same hash, different id: a new call, not a reuse.
      request(journal, "s1", second);
      approve(journal, "s1", second);
      await journal.callStarted({ sessionId: "s1", callId: second });
      journal.callFinished({ sessionId: "s1", callId: second, outcome: "succeeded" });
      expect(await codeOf(() => request(journal, "s1", first))).toBe(JOURNAL_ERRORS.CALL_EXISTS);
      expect(await codeOf(() => journal.callFinished({ sessionId: "s1", callId: second, outcome: "failed" }))).toBe(
        JOURNAL_ERRORS.TERMINAL_EXISTS,
      );
      expect(await codeOf(() => journal.callFinished({ sessionId: "s1", callId: "never-seen", outcome: "failed" }))).toBe(
        JOURNAL_ERRORS.UNKNOWN_CALL,
      );
      expect(journal.calls("s1").map((call) => [call.callId, call.outcome])).toEqual([
        [first, "succeeded"],
        [second, "succeeded"],
      ]);
    } finally {
      journal.close();
    }
  });

  it("A3 after a reopen, ended and denied ids of a session are refused as before", async () => {
    const file = folder.file("reopen.db");
    const journal = Journal.open({ path: file });
    openSession(journal, "s1");
    await completeCall(journal, "s1", "done");
    request(journal, "s1", "no");
    journal.approvalDecided({ sessionId: "s1", callId: "no", decision: "denied", by: "person", scope: "once", key: "k" });
    journal.close();
    const reopened = Journal.open({ path: file });
    try {
      expect(await codeOf(() => request(reopened, "s1", "done"))).toBe(JOURNAL_ERRORS.CALL_EXISTS);
      expect(await codeOf(() => request(reopened, "s1", "no"))).toBe(JOURNAL_ERRORS.CALL_EXISTS);
      expect(await codeOf(() => reopened.callStarted({ sessionId: "s1", callId: "no" }))).toBe(JOURNAL_ERRORS.CALL_DENIED);
      expect(await codeOf(() => reopened.callStarted({ sessionId: "s1", callId: "done" }))).toBe(JOURNAL_ERRORS.TERMINAL_EXISTS);
      request(reopened, "s1", "fresh");
    } finally {
      reopened.close();
    }
  });
});
