import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Journal } from "../src/index.js";
import { runUntilKilled, temporaryFolderPerTest } from "./helpers.js";

// A full disk, as a writer meets it: the child runs under a file-size limit (`ulimit -f`,
// with SIGXFSZ ignored), so a write past it fails as a write to a full disk does.
const dist = path.resolve(import.meta.dirname, "../dist/index.js");
const folder = temporaryFolderPerTest();

/** Runs `script` (an ES module) with files limited to `kilobytes`; its stdout lines parsed as JSON. */
function runLimited(script: string, kilobytes: number): unknown[] {
  const ran = spawnSync("bash", ["-c", `trap '' XFSZ; ulimit -f ${kilobytes}; exec "$0" --input-type=module -e "$1"`, process.execPath, script], {
    encoding: "utf8",
    timeout: 20_000,
  });
  if (ran.status !== 0) throw new Error(`limited child failed (${ran.status ?? ran.signal}): ${ran.stderr}`);
  return ran.stdout
    .trim()
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as unknown);
}

/** The size of the journal's largest file, in kilobytes (rounded up). */
function largestKilobytes(file: string): number {
  return Math.ceil(Math.max(...[file, `${file}-wal`, `${file}-shm`].map((name) => (existsSync(name) ? statSync(name).size : 0))) / 1024);
}

const writeCalls = (file: string) => `
  import { Journal } from ${JSON.stringify(dist)};
  let journal;
  try {
    journal = Journal.open({ path: ${JSON.stringify(file)} });
  } catch (error) {
    console.log(JSON.stringify({ open: error.code, message: error.message }));
    process.exit(0);
  }
  const result = { text: "x".repeat(4000) };
  try {
    journal.sessionOpened({ sessionId: "full", executionIdentity: "owid3:full", identityInputs: {}, workspace: "/w" });
    for (let index = 0; index < 2000; index += 1) {
      const callId = "c" + index;
      journal.callRequested({ sessionId: "full", turnId: "t1", callId, alias: "a__b", qualifiedName: "a.b", args: { index } });
      journal.approvalDecided({ sessionId: "full", callId, decision: "approved", by: "bypass", scope: "once", key: "k" });
      await journal.callStarted({ sessionId: "full", callId });
      console.log(JSON.stringify({ acked: callId }));
      journal.callFinished({ sessionId: "full", callId, outcome: "succeeded", result });
    }
  } catch (error) {
    console.log(JSON.stringify({ failed: error.code, message: error.message }));
  }
  try { journal.close(); } catch {}
`;

describe.runIf(process.platform === "linux")("a full disk (A3)", () => {
  it("A3 a writer that meets a full disk refuses further writes, acknowledges no start it could not commit, and loses none it did", async () => {
    const file = folder.file("full/journal.db");
    const first = Journal.open({ path: file });
    first.close();
    const lines = runLimited(writeCalls(file), largestKilobytes(file) + 256) as { acked?: string; failed?: string; message?: string }[];
    const acked = lines.flatMap((line) => (line.acked === undefined ? [] : [line.acked]));
    const failure = lines.find((line) => line.failed !== undefined);
    expect(failure, "the limit must be reached, or the test proves nothing").toMatchObject({ failed: "JOURNAL_WRITE_FAILED" });
    expect(failure!.message).toContain("were not acknowledged");
    expect(acked.length).toBeGreaterThan(0);

    const journal = Journal.open({ path: file });
    try {
      const started = new Set(
        journal
          .calls("full")
          .filter((call) => call.started)
          .map((call) => call.callId),
      );
      for (const callId of acked) expect(started.has(callId), `acknowledged start of ${callId}`).toBe(true);
      expect(journal.verify()).toMatchObject({ ok: true });
      expect(journal.session("full")?.openCalls).toBe(0);
    } finally {
      journal.close();
    }
  });

  it("A3 reopening a crashed journal while the disk is still full refuses to open, says nothing was lost, and recovers once it can write", async () => {
    const file = folder.file("crashed/journal.db");
    const output = await runUntilKilled(`
      import { Journal } from ${JSON.stringify(dist)};
      const journal = Journal.open({ path: ${JSON.stringify(file)} });
      journal.sessionOpened({ sessionId: "s1", executionIdentity: "owid3:full", identityInputs: {}, workspace: "/w" });
      journal.callRequested({ sessionId: "s1", turnId: "t1", callId: "c1", alias: "a__b", qualifiedName: "a.b", args: {} });
      journal.approvalDecided({ sessionId: "s1", callId: "c1", decision: "approved", by: "bypass", scope: "once", key: "k" });
      await journal.callStarted({ sessionId: "s1", callId: "c1" });
      process.stdout.write("acked\\n");
      process.kill(process.pid, "SIGKILL");
    `);
    expect(output).toBe("acked\n");
    const [refused] = runLimited(
      `import { Journal } from ${JSON.stringify(dist)};
       try { Journal.open({ path: ${JSON.stringify(file)} }).close(); console.log(JSON.stringify({ opened: true })); }
       catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message })); }`,
      largestKilobytes(file),
    ) as { code?: string; message?: string }[];
    expect(refused).toMatchObject({ code: "JOURNAL_OPEN_FAILED", message: expect.stringContaining("nothing in the file was lost") });
    expect(refused!.message).not.toContain("are lost");

    const journal = Journal.open({ path: file });
    try {
      expect(journal.recovered).toEqual([{ sessionId: "s1", callId: "c1", turnId: "t1", qualifiedName: "a.b", alias: "a__b", started: true }]);
      expect(journal.warnings).toEqual([]);
      expect(journal.verify()).toMatchObject({ ok: true, records: 5 });
    } finally {
      journal.close();
    }
  });
});
