import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collect, FIXTURES, FIXTURE_HOST, runEntry, tempDir, waitForOutput, writeBundle, type Ran } from "./helpers.js";

const temp = tempDir("process-end");
afterAll(() => temp.cleanup());

/** A host whose `fixture.stuck` ignores its abort and leaves an interval running. */
const STUCK_HOST = path.join(FIXTURES, "stuck-host.mjs");
/** Far above a clean stop (well under a second), far below the bridge's grace periods stacking up. */
const EXIT_WITHIN_MS = 15_000;

/**
 * Runs the stuck host with `args` until its tool is running, sends SIGTERM once, and
 * returns how the process ended, or `"still running"` (then killed) if it outlived
 * {@link EXIT_WITHIN_MS}.
 */
async function stopOnce(args: string[]): Promise<Ran | "still running"> {
  const child = spawn(process.execPath, [STUCK_HOST, ...args], { env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  const done = collect(child);
  await waitForOutput(child.stderr!, (text) => text.includes("stuck for ever"));
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([done, new Promise<"still running">((resolve) => (timer = setTimeout(() => resolve("still running"), EXIT_WITHIN_MS)))]);
  clearTimeout(timer);
  if (outcome === "still running") {
    child.kill("SIGKILL");
    await done;
  }
  return outcome;
}

async function journalOf(journal: string) {
  const sessions = JSON.parse((await runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal])).stdout) as {
    sessionId: string;
    closedAt: string | null;
  }[];
  const show = await runEntry(FIXTURE_HOST, ["journal", "show", sessions[0]!.sessionId, "--json", "--journal", journal]);
  return { sessions, calls: (JSON.parse(show.stdout) as { calls: unknown[] }).calls };
}

describe("a finished command ends its process, whatever an abandoned tool left running", () => {
  it("E1 call ends its process after a native tool that ignores its abort is abandoned on SIGTERM: exit 143, journal closed", async () => {
    const journal = path.join(temp.dir, "call.db");
    const result = await stopOnce(["call", "fixture.stuck", "--approve", "yes", "--journal", journal]);
    expect(result).not.toBe("still running");
    const ran = result as Ran;
    expect(ran.code).toBe(143);
    expect(ran.stdout).toMatch(/cancelled/);
    expect(ran.stderr).toMatch(/^error CLI_INTERRUPTED: stopped by SIGTERM\nhint: /m);
    // The terminal records were committed before the process ended.
    const { sessions, calls } = await journalOf(journal);
    expect(sessions[0]!.closedAt).toEqual(expect.any(String));
    expect(calls[0]).toMatchObject({ qualifiedName: "fixture.stuck", outcome: "cancelled" });
    expect((await runEntry(FIXTURE_HOST, ["journal", "verify", "--journal", journal])).code).toBe(0);
  });

  it("E1 run --message ends its process after its turn abandons a native tool that ignores its abort", async () => {
    const journal = path.join(temp.dir, "run.db");
    const bundle = writeBundle(path.join(temp.dir, "stuck"), JSON.stringify({ version: 3, tools: ["fixture.stuck"] }));
    const script = path.join(temp.dir, "stuck-script.json");
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "fixture__stuck", arguments: {} }] }, { text: "never reached" }]));
    const result = await stopOnce(["run", "--bundle", bundle, "--script", script, "--approve", "yes", "--message", "go", "--journal", journal]);
    expect(result).not.toBe("still running");
    expect((result as Ran).code).toBe(143);
    expect((result as Ran).stderr).toMatch(/^error CLI_INTERRUPTED: stopped by SIGTERM\nhint: /m);
    const { sessions } = await journalOf(journal);
    expect(sessions[0]!.closedAt).toEqual(expect.any(String));
  });
});
