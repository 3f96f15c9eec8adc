import { existsSync, mkdirSync, readdirSync, renameSync } from "node:fs";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { describe, expect, it } from "vitest";
import { Runtime, type RuntimeEvent, type RuntimeOptions } from "../src/index.js";
import { ScriptedProvider } from "../src/testing/index.js";
import { echo, nativeTool, scratchEach, writeBundle, writeHostEntry } from "./support/harness.js";

// Opening refuses bad options before it holds anything, and closing lets go of everything
// it holds, whatever fails on the way: a host in a long-lived process fixes the problem
// and opens again, in the same process.

const runtimes: Runtime[] = [];
const space = scratchEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close().catch(() => undefined);
});

function options(extra: Partial<RuntimeOptions> = {}, journalPath = path.join(space.dir, "journal.db")): RuntimeOptions {
  return { workspace: space.dir, journal: { path: journalPath }, hostEntry: writeHostEntry(space.dir), ...extra };
}

async function open(registry: ToolRegistry, runtimeOptions: RuntimeOptions): Promise<Runtime> {
  const runtime = await Runtime.openWithRegistry(registry, runtimeOptions);
  runtimes.push(runtime);
  return runtime;
}

describe("opening a runtime with options it cannot use", () => {
  it("N8 A3 an MCP option the bridge refuses is OPTIONS_INVALID naming mcp.<field>, before the journal opens or the registry freezes", async () => {
    const registry = new ToolRegistry();
    const refused = Runtime.openWithRegistry(registry, options({ mcp: { connectTimeoutMs: -1 } }));
    await expect(refused).rejects.toMatchObject({
      code: "OPTIONS_INVALID",
      details: { option: "mcp.connectTimeoutMs" },
      message: expect.stringContaining("mcp.connectTimeoutMs"),
    });
    expect(existsSync(path.join(space.dir, "journal.db"))).toBe(false);
    // Nothing was held: the registry takes registrations, and the fixed options open.
    registry.register(echo);
    const runtime = await open(registry, options());
    expect(runtime.registry.natives().map((tool) => tool.name)).toEqual(["test.echo"]);
  });

  it("A1 approvalTimeoutMs must fit a timer (1 ms up to 2^31 − 1 ms): Infinity, NaN, zero, negatives and larger values are OPTIONS_INVALID naming it", async () => {
    const registry = new ToolRegistry();
    for (const approvalTimeoutMs of [Number.POSITIVE_INFINITY, Number.NaN, 0, -5, 2 ** 31, 30 * 24 * 3600 * 1000]) {
      const refused = Runtime.openWithRegistry(registry, options({ approvalTimeoutMs }));
      await expect(refused).rejects.toMatchObject({
        code: "OPTIONS_INVALID",
        details: { option: "approvalTimeoutMs" },
        message: expect.stringContaining("2147483647"),
      });
    }
    expect(existsSync(path.join(space.dir, "journal.db"))).toBe(false);
    registry.register(echo);
    const approver = () => ({ approved: true });
    const runtime = await open(registry, options({ approvalTimeoutMs: 2 ** 31 - 1, approver }));
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]) });
    // The longest timeout is a real wait: the approver's answer decides, not a timer that fired at once.
    expect(await session.callTool("test.echo", { text: "x" })).toMatchObject({ outcome: "succeeded", approval: { approved: true, by: "person" } });
  });
});

/** Moves a journal's files away under its writer (all but the writer lock), as a lost volume would. */
function pullJournalFiles(folder: string): void {
  const moved = path.join(space.dir, "moved");
  mkdirSync(moved);
  for (const name of readdirSync(folder)) if (name !== "journal.db-lock") renameSync(path.join(folder, name), path.join(moved, name));
}

describe("a journal that fails under a running turn", () => {
  it("T5 A3 the turn's tools are still settled and its call and end announced, runTurn rejects with the journal's error, and close still revokes", async () => {
    const folder = path.join(space.dir, "journal");
    mkdirSync(folder);
    const hooks: string[] = [];
    // The journal's files go while the tool runs; its progress reports make commits, one of
    // which notices (the writer checks its file at most every 200 ms): the tool runs on
    // until a flush says the journal failed, however long a busy machine takes.
    let runtime: Runtime | undefined;
    const work = nativeTool(
      "test.work",
      async (context) => {
        pullJournalFiles(folder);
        let failed = false;
        for (let tick = 0; !failed && tick < 1000; tick++) {
          context.progress.report({ message: `tick ${tick}` });
          await runtime!.journal.flush().catch(() => (failed = true));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return { json: { done: true } };
      },
      { revoke: () => void hooks.push("work revoke"), turnFinished: (_sessionId, completed) => void hooks.push(`work finished ${completed}`) },
    );
    const holder = nativeTool("test.holder", async () => ({ json: 1 }), { revoke: () => void hooks.push("holder revoke") });
    const registry = new ToolRegistry();
    registry.register(work);
    registry.register(holder);
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__work", arguments: "{}" }] }, { text: "done" }]);
    runtime = await open(registry, options({ models: [model] }, path.join(folder, "journal.db")));
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.work", "test.holder"]), policy: { mode: "bypass" } });
    const events: RuntimeEvent[] = [];
    session.subscribe((event) => events.push(event));
    await expect(session.runTurn("go")).rejects.toMatchObject({ code: "JOURNAL_WRITE_FAILED" });
    expect(hooks).toEqual(["work finished false", "holder revoke"]);
    expect(events.find((event) => event.type === "call_finished")).toMatchObject({ outcome: "crashed", code: "JOURNAL_WRITE_FAILED" });
    expect(events.at(-1)).toMatchObject({ type: "turn_finished", completed: false, reason: "fault" });
    // The session is not left thinking a turn runs, and close still revokes every selected tool.
    hooks.length = 0;
    await expect(session.close()).rejects.toMatchObject({ code: "JOURNAL_WRITE_FAILED" });
    expect(hooks.sort()).toEqual(["holder revoke", "work revoke"]);
  });
});

describe("closing a runtime", () => {
  it("A3 close() closes the journal it opened even when the final flush fails, and rejects with that failure", async () => {
    const folder = path.join(space.dir, "journal");
    mkdirSync(folder);
    const journalPath = path.join(folder, "journal.db");
    const registry = new ToolRegistry();
    registry.register(echo);
    const runtime = await Runtime.openWithRegistry(registry, options({}, journalPath));
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: { mode: "bypass" } });
    expect(await session.callTool("test.echo", { text: "x" })).toMatchObject({ outcome: "succeeded" });
    // The journal's files are moved away under it (all but its writer lock): the writer
    // notices at a later commit (it checks its file at most every 200 ms) and refuses every
    // write and flush from then on.
    pullJournalFiles(folder);
    let failure: unknown;
    for (let attempt = 0; attempt < 500 && failure === undefined; attempt++) {
      try {
        await session.callTool("test.echo", { text: "x" });
        await runtime.journal.flush();
        await new Promise((resolve) => setTimeout(resolve, 10));
      } catch (error) {
        failure = error;
      }
    }
    expect(failure).toMatchObject({ code: "JOURNAL_WRITE_FAILED" });
    await expect(runtime.close()).rejects.toMatchObject({ code: "JOURNAL_WRITE_FAILED" });
    // The journal let go of its writer lock: a new runtime in this process opens the same
    // path (a fresh journal there), where it used to be refused with JOURNAL_LOCKED.
    expect(existsSync(path.join(folder, "journal.db-lock"))).toBe(false);
    const again = new ToolRegistry();
    again.register(echo);
    const reopened = await open(again, options({}, journalPath));
    expect(reopened.journal.readonly).toBe(false);
  });
});
