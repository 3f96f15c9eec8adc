import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Journal, JOURNAL_ERRORS } from "../src/index.js";
import { approve, openSession, request, temporaryFolder } from "./helpers.js";

describe("a journal whose file disappears while it is open (A3)", () => {
  it("A3 the folder deleted under a writer fails the journal (JOURNAL_WRITE_FAILED) instead of dropping every later record silently", async () => {
    const folder = temporaryFolder();
    const journal = Journal.open({ path: folder.file("journal.db") });
    try {
      openSession(journal, "s");
      request(journal, "s", "c1");
      approve(journal, "s", "c1");
      await journal.callStarted({ sessionId: "s", callId: "c1" });
      await journal.flush();
      rmSync(folder.dir, { recursive: true, force: true });
      // Within the check interval (200 ms) a later commit notices, fails the journal, and
      // every later write or flush says so.
      let failure: unknown;
      for (let index = 2; index < 200 && failure === undefined; index += 1) {
        try {
          request(journal, "s", `c${index}`);
          await journal.flush();
        } catch (error) {
          failure = error;
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(failure).toMatchObject({ code: JOURNAL_ERRORS.WRITE_FAILED, message: expect.stringContaining("the journal file is gone") });
      expect(() => request(journal, "s", "later")).toThrow(expect.objectContaining({ code: JOURNAL_ERRORS.WRITE_FAILED }));
    } finally {
      try {
        journal.close();
      } catch {
        // Closing a journal whose file is gone may fail too; what matters is above.
      }
      folder.remove();
    }
  });
});
