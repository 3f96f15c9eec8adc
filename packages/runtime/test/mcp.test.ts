import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "../src/index.js";
import { ScriptedProvider } from "../src/testing/index.js";
import { scratchEach, writeBundle, writeHostEntry } from "./support/harness.js";

const server = path.resolve(import.meta.dirname, "fixtures/mutable-server.mjs");
const secret = "mcp-secret-value-91d2";

let runtime: Runtime | undefined;
let schemaFile: string;
let downFile: string;
const space = scratchEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

beforeEach(() => {
  schemaFile = path.join(space.dir, "field.txt");
  writeFileSync(schemaFile, "verbose");
  downFile = path.join(space.dir, "down");
});

async function openWith(
  model: ScriptedProvider | undefined,
  approver?: () => { approved: boolean; scope?: "once" | "session" } | Promise<{ approved: boolean; scope?: "once" | "session" }>,
  extraArgs: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<Runtime> {
  const registry = new ToolRegistry();
  registry.registerMcp({
    namespace: "mut",
    program: process.execPath,
    args: [server, ...extraArgs],
    env: {
      MUTABLE_SCHEMA_FILE: schemaFile,
      MUTABLE_SECRET: secret,
      MUTABLE_DOWN_FILE: downFile,
      MUTABLE_DESCRIPTION_FILE: path.join(space.dir, "description.txt"),
      ...extraEnv,
    },
  });
  runtime = await Runtime.openWithRegistry(registry, {
    workspace: space.dir,
    journal: { path: path.join(space.dir, "journal.db") },
    hostEntry: writeHostEntry(space.dir),
    ...(model ? { models: [model] } : {}),
    ...(approver ? { approver } : {}),
  });
  return runtime;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("MCP tools through the runtime", () => {
  it("M2 B2 discovery shows only the selected remote tool; an unselected published tool cannot be called", async () => {
    const model = new ScriptedProvider([
      {
        toolCalls: [
          { name: "mut__status_get", arguments: "{}" },
          { name: "mut__hidden_tool", arguments: "{}" },
        ],
      },
      { text: "done" },
    ]);
    await openWith(model);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    const turn = await session.runTurn("status?");
    expect(model.requests[0]!.tools.map((tool) => tool.name)).toEqual(["mut__status_get"]);
    expect(turn.calls.map((call) => [call.outcome, call.code])).toEqual([
      ["succeeded", undefined],
      ["failed", "UNKNOWN_TOOL"],
    ]);
    expect(turn.calls[0]!.json).toMatchObject({ ok: true });
  });

  it.each([
    ["a changed catalog schema", () => writeFileSync(schemaFile, "detailed")],
    ["a changed description (same schema)", () => writeFileSync(path.join(space.dir, "description.txt"), "Deletes every file in your home folder.")],
  ])("M3 %s does not inherit an earlier approval", async (_change, change) => {
    let asked = 0;
    const step = { toolCalls: [{ name: "mut__status_get", arguments: "{}" }] };
    const model = new ScriptedProvider([step, { text: "1" }, step, { text: "2" }, step, { text: "3" }]);
    await openWith(model, () => (asked++, { approved: true, scope: "session" }));
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]) });
    await session.runTurn("one");
    await session.runTurn("two");
    expect(asked).toBe(1);
    change();
    const third = await session.runTurn("three");
    expect(asked).toBe(2);
    expect(third.calls[0]!.outcome).toBe("succeeded");
  });

  it("M3 a host call after the provider announced a change to its tools discovers again, and so asks again", async () => {
    const asked: string[] = [];
    await openWith(undefined, () => (asked.push("asked"), { approved: true, scope: "session" }), [], { MUTABLE_LIST_CHANGED: "1" });
    const session = await runtime!.openSession({
      bundle: writeBundle(space.dir, ["mut.status_get", "mut.describe_as"]),
      policy: { classifications: { "mut.describe_as": "harmless" }, rules: { harmless: "allow" } },
    });
    expect((await session.callTool("mut.status_get", {})).outcome).toBe("succeeded");
    expect((await session.callTool("mut.status_get", {})).outcome).toBe("succeeded");
    expect(asked).toHaveLength(1); // remembered for the session
    expect((await session.callTool("mut.describe_as", { text: "Deletes every file in your home folder." })).outcome).toBe("succeeded");
    // The announcement may trail the call's answer by a moment: calls until one sees it.
    await expect
      .poll(async () => {
        const report = await session.callTool("mut.status_get", {});
        expect(report.outcome).toBe("succeeded");
        return asked.length;
      })
      .toBe(2);
    // The preparation the call made took the new catalog.
    expect((await session.prepare()).byAlias("mut__status_get")).toMatchObject({ descriptor: { description: "Deletes every file in your home folder." } });
  });

  it("M3 an announced change stands when the discovery that listed it was cancelled: the next host call asks again", async () => {
    const slowList = path.join(space.dir, "slow-list");
    const asked: string[] = [];
    await openWith(undefined, () => (asked.push("asked"), { approved: true, scope: "session" }), [], {
      MUTABLE_LIST_CHANGED: "1",
      MUTABLE_SLOW_LIST_FILE: slowList,
    });
    const session = await runtime!.openSession({
      bundle: writeBundle(space.dir, ["mut.status_get", "mut.describe_as"]),
      policy: { classifications: { "mut.describe_as": "harmless" }, rules: { harmless: "allow" } },
    });
    expect((await session.callTool("mut.status_get", {})).outcome).toBe("succeeded");
    expect((await session.callTool("mut.describe_as", { text: "Deletes every file in your home folder." })).outcome).toBe("succeeded");
    // Once the announcement is in, a host's preparation lists again: the listing is held
    // until the test lets it go, and the host gives up on it meanwhile.
    writeFileSync(slowList, "");
    let cancelled = false;
    for (let attempt = 0; attempt < 500 && !cancelled; attempt++) {
      const stop = new AbortController();
      let outcome: string | undefined;
      const prepared = session.prepare({ signal: stop.signal }).then(
        () => (outcome = "taken"),
        () => (outcome = "cancelled"),
      );
      // Either the catalog was reused (the announcement was not in yet), or the listing
      // started and is held.
      await expect.poll(() => outcome !== undefined || existsSync(`${slowList}.listing`), { timeout: 10_000 }).toBe(true);
      if (outcome === "taken") continue;
      stop.abort(new Error("the host gave up"));
      cancelled = (await prepared) === "cancelled";
    }
    expect(cancelled).toBe(true);
    // The listing runs on under the session and ends; its result was never taken.
    rmSync(slowList);
    await expect.poll(() => existsSync(`${slowList}.listed`), { timeout: 10_000 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await session.callTool("mut.status_get", {})).outcome).toBe("succeeded");
    expect(asked).toHaveLength(2);
    expect((await session.prepare()).byAlias("mut__status_get")).toMatchObject({ descriptor: { description: "Deletes every file in your home folder." } });
  });

  it("M3 a turn's call after a discovery took a changed catalog is not sent under the turn's approval (MCP_TOOL_CHANGED)", async () => {
    const descriptionFile = path.join(space.dir, "description.txt");
    let session: Awaited<ReturnType<Runtime["openSession"]>> | undefined;
    let asked = 0;
    // While the person is asked about the turn's first call, the host prepares again, and
    // that discovery takes a catalog whose status_get says something else.
    const approver = async () => {
      asked++;
      if (asked === 1) {
        writeFileSync(descriptionFile, "Deletes every file in your home folder.");
        await session!.prepare();
      }
      return { approved: true, scope: "session" as const };
    };
    const step = {
      toolCalls: [
        { name: "mut__status_get", arguments: "{}" },
        { name: "mut__status_get", arguments: "{}" },
      ],
    };
    const model = new ScriptedProvider([step, { text: "1" }, { toolCalls: [{ name: "mut__status_get", arguments: "{}" }] }, { text: "2" }]);
    await openWith(model, approver);
    session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]) });
    const first = await session.runTurn("one");
    expect(first.calls.map((call) => [call.outcome, call.code])).toEqual([
      ["failed", "MCP_TOOL_CHANGED"],
      ["failed", "MCP_TOOL_CHANGED"],
    ]);
    expect(first.reason).toBe("answered"); // the model was told, and the turn went on
    expect(asked).toBe(1);
    // The next turn prepares with the changed catalog: asked again, then it runs.
    const second = await session.runTurn("two");
    expect(second.calls.map((call) => call.outcome)).toEqual(["succeeded"]);
    expect(asked).toBe(2);
    expect(runtime!.journal.verify(session.id).ok).toBe(true);
  });

  it("A2 a remembered approval does not carry to the same tool of a provider started differently (same catalog)", async () => {
    let asked = 0;
    const approver = () => (asked++, { approved: true, scope: "session" as const });
    const bundle = writeBundle(space.dir, ["mut.status_get"]);
    const callOnce = async (extraArgs: string[]) => {
      await openWith(undefined, approver, extraArgs);
      const session = await runtime!.openSession({ bundle });
      expect((await session.callTool("mut.status_get", {})).outcome).toBe("succeeded");
      await runtime!.close();
      runtime = undefined;
    };
    await callOnce([]);
    await callOnce([]);
    expect(asked).toBe(1); // remembered for the identity, tool, catalog entry and provider
    await callOnce(["--variant", "B"]);
    expect(asked).toBe(2); // another program line: asked again
    await callOnce([]);
    expect(asked).toBe(2); // the first provider's approval still stands for it
  });

  it("M4 I2 the runtime owns the provider process: inventory reads live connections only, close ends the process", async () => {
    await openWith(undefined);
    expect(runtime!.mcpInventory()).toBeUndefined();
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    expect(runtime!.mcpInventory()).toBeUndefined(); // opening a session starts nothing
    const call = await session.callTool("mut.status_get", {});
    const pid = (call.json as { pid: number }).pid;
    expect(alive(pid)).toBe(true);
    const inventory = runtime!.mcpInventory();
    expect(JSON.stringify(inventory)).toContain("hidden_tool"); // raw names preserved
    await runtime!.close();
    expect(alive(pid)).toBe(false);
  });

  it("E6 a secret from the provider's configured env never reaches results or the journal", async () => {
    await openWith(undefined);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    const call = await session.callTool("mut.status_get", {});
    expect(call.json).toMatchObject({ secretEcho: "[redacted]" });
    await runtime!.journal.flush();
    expect([...runtime!.journal.exportSession(session.id)].join("\n")).not.toContain(secret);
  });

  it("E6 a provider's env value shorter than 8 characters, echoed by its server, reaches neither the result nor the journal", async () => {
    const short = "s7-q9Zx";
    await openWith(undefined, undefined, [], { MUTABLE_SECRET: short });
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    const call = await session.callTool("mut.status_get", {});
    expect(call.json).toMatchObject({ secretEcho: "[redacted]" });
    expect(JSON.stringify(call)).not.toContain(short);
    await runtime!.journal.flush();
    expect([...runtime!.journal.exportSession(session.id)].join("\n")).not.toContain(short);
  });

  it("E6 an MCP tool's description carrying the provider's configured secret reaches the model redacted", async () => {
    writeFileSync(path.join(space.dir, "description.txt"), `Report the status; authenticates with ${secret}.`);
    const model = new ScriptedProvider([{ text: "done" }]);
    await openWith(model);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    await session.runTurn("go");
    expect(model.requests[0]!.tools.map((tool) => tool.description)).toEqual(["Report the status; authenticates with [redacted]."]);
    expect(JSON.stringify(model.requests[0])).not.toContain(secret);
  });

  it("M2 A3 a host call whose provider was unreachable at preparation looks again: refused while it is down, journaled, then it runs", async () => {
    await openWith(undefined);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    writeFileSync(downFile, "");
    const refused = await session.callTool("mut.status_get", {});
    expect(refused).toMatchObject({ outcome: "failed", code: "PROVIDER_UNAVAILABLE", isError: true });
    expect(refused.message).toMatch(/MCP provider "mut" is unavailable \(.+\); the call was not made/);
    const records = runtime!.journal.timeline({ sessionId: session.id, callId: refused.callId }).map((record) => record.kind);
    expect(records).toEqual(["call_requested", "call_finished"]); // never approved, never started
    // Journaled and reported under the selected tool's name, which the audit trail needs.
    expect(refused.qualifiedName).toBe("mut.status_get");
    expect(runtime!.journal.calls(session.id)[0]).toMatchObject({ qualifiedName: "mut.status_get" });
    // Still down: refused again, after looking again (not from the first preparation's verdict).
    expect(await session.callTool("mut.status_get", {})).toMatchObject({ code: "PROVIDER_UNAVAILABLE" });
    rmSync(downFile);
    const call = await session.callTool("mut.status_get", {});
    expect(call).toMatchObject({ outcome: "succeeded", json: { ok: true } });
    const prepared = [...runtime!.journal.exportSession(session.id)].map((line) => JSON.parse(line)).filter((record) => record.kind === "turn_prepared");
    expect(prepared).toHaveLength(3); // one preparation per call while the provider was down
    expect(await session.callTool("mut.status_get", {})).toMatchObject({ outcome: "succeeded" });
    expect([...runtime!.journal.exportSession(session.id)].map((line) => JSON.parse(line)).filter((record) => record.kind === "turn_prepared")).toHaveLength(3);
  });

  it("M2 a turn whose provider is down runs without its tools, and the model is told which selected tools it will not find", async () => {
    const model = new ScriptedProvider([{ text: "the status tool is down" }, { text: "fine" }]);
    await openWith(model);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    writeFileSync(downFile, "");
    expect(await session.runTurn("status?")).toMatchObject({ completed: true });
    expect(model.requests[0]!.tools).toEqual([]);
    expect(model.requests[0]!.instructions).toContain("Unavailable this turn (their provider could not be reached; do not call them");
    expect(model.requests[0]!.instructions).toContain("- mut__status_get");
    // Reachable again: the tool is back and the notice is gone.
    rmSync(downFile);
    await session.runTurn("again");
    expect(model.requests[1]!.tools.map((tool) => tool.name)).toEqual(["mut__status_get"]);
    expect(model.requests[1]!.instructions).not.toContain("Unavailable this turn");
  });

  it("M2 a model that calls a down provider's tool anyway is told the provider is unavailable, not that the tool is unknown", async () => {
    const model = new ScriptedProvider([
      {
        toolCalls: [
          { name: "mut__status_get", arguments: {} },
          { name: "mut__never_selected", arguments: {} },
          { name: "other__tool", arguments: {} },
        ],
      },
      { text: "it is down" },
    ]);
    await openWith(model);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    writeFileSync(downFile, "");
    const turn = await session.runTurn("status?");
    expect(turn.completed).toBe(true);
    // An alias under no down provider's namespace stays unknown.
    expect(turn.calls.map((call) => call.code)).toEqual(["PROVIDER_UNAVAILABLE", "PROVIDER_UNAVAILABLE", "UNKNOWN_TOOL"]);
    // The selected tool is named; the one the bundle never selected is not.
    expect(turn.calls.map((call) => call.qualifiedName)).toEqual(["mut.status_get", undefined, undefined]);
    expect(turn.calls[0]!.modelText).toMatch(
      /^Error PROVIDER_UNAVAILABLE: MCP provider "mut" is unavailable \(.+\); the call was not made, try it again later/,
    );
  });

  it("M2 E6 a v1 bundle's down provider: a model's call is named only when its alias makes a valid name, and redacted", async () => {
    const long = `mut__${"x".repeat(5000)}`;
    const model = new ScriptedProvider([
      {
        toolCalls: [
          { name: "mut__status_get", arguments: {} },
          { name: `mut__tool_${secret}`, arguments: {} },
          { name: long, arguments: {} },
          { name: "mut__", arguments: {} },
          // `a.b` or `a__b`: the alias cannot say which remote name it stands for.
          { name: "mut__a__b", arguments: {} },
        ],
      },
      { text: "it is down" },
    ]);
    await openWith(model);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, '{"version":1,"mcpServers":["mut"]}'), policy: { mode: "bypass" } });
    writeFileSync(downFile, "");
    const turn = await session.runTurn("status?");
    expect(turn.calls.map((call) => call.code)).toEqual(Array(5).fill("PROVIDER_UNAVAILABLE"));
    expect(turn.calls.map((call) => call.qualifiedName)).toEqual(["mut.status_get", "mut.tool_[redacted]", undefined, undefined, undefined]);
    const journaled = runtime!.journal.calls(session.id).map((call) => call.qualifiedName);
    expect(journaled).toEqual(["mut.status_get", "mut.tool_[redacted]", "(unselected)", "(unselected)", "(unselected)"]);
    expect(JSON.stringify([...runtime!.journal.exportSession(session.id)])).not.toContain(secret);
  });

  it("M2 concurrent first host calls of a session share one preparation (one discovery)", async () => {
    await openWith(undefined);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    const calls = await Promise.all(Array.from({ length: 8 }, () => session.callTool("mut.status_get", {})));
    expect(calls.map((call) => call.outcome)).toEqual(Array(8).fill("succeeded"));
    const prepared = [...runtime!.journal.exportSession(session.id)].map((line) => JSON.parse(line)).filter((record) => record.kind === "turn_prepared");
    expect(prepared).toHaveLength(1);
  });

  it("M2 a host call cancelled while the shared preparation runs rejects; the other calls still run", async () => {
    await openWith(undefined);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    const controller = new AbortController();
    const cancelled = session.callTool("mut.status_get", {}, { signal: controller.signal });
    const other = session.callTool("mut.status_get", {});
    controller.abort(new Error("host gave up"));
    await expect(cancelled).rejects.toThrow("host gave up");
    expect(await other).toMatchObject({ outcome: "succeeded" });
  });

  it("M2 M4 a host call after its provider's process exited reconnects first: it runs, on a new process", async () => {
    await openWith(undefined);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: { mode: "bypass" } });
    const before = await session.callTool("mut.status_get", {});
    const pid = (before.json as { pid: number }).pid;
    process.kill(pid, "SIGKILL");
    // Until the bridge has seen the exit, its live inventory still lists the server.
    while (JSON.stringify(runtime!.mcpInventory({ sessionId: session.id }) ?? {}).includes("status_get"))
      await new Promise((resolve) => setTimeout(resolve, 20));
    const after = await session.callTool("mut.status_get", {});
    expect(after).toMatchObject({ outcome: "succeeded" });
    expect((after.json as { pid: number }).pid).not.toBe(pid);
  });

  it("M2 M4 E4 a host call whose provider crashes mid-call ends crashed (never retried); the next host call reconnects", async () => {
    await openWith(undefined);
    const session = await runtime!.openSession({ bundle: writeBundle(space.dir, ["mut.status_get", "mut.crash_now"]), policy: { mode: "bypass" } });
    const before = await session.callTool("mut.status_get", {});
    const crashed = await session.callTool("mut.crash_now", {});
    expect(crashed).toMatchObject({ outcome: "crashed", code: "MCP_PROVIDER_CRASHED", stopsTurn: true });
    const kinds = runtime!.journal.timeline({ sessionId: session.id, callId: crashed.callId }).map((record) => record.kind);
    expect(kinds).toEqual(["call_requested", "approval_decided", "call_started", "call_finished"]);
    const after = await session.callTool("mut.status_get", {});
    expect(after).toMatchObject({ outcome: "succeeded" });
    expect((after.json as { pid: number }).pid).not.toBe((before.json as { pid: number }).pid);
  });
});
