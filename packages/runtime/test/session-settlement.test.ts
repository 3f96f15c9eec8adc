import { toolError } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import type { Approver } from "../src/index.js";
import { ScriptedProvider } from "../src/testing/index.js";
import { runtimesEach } from "./session-helpers.js";
import { nativeTool, writeBundle } from "./support/harness.js";

const { space, open } = runtimesEach();

describe("sessions", () => {
  /** Two tools that log how they are settled: `test.plain` has only `revoke`, `test.keeper` also `turnFinished`. */
  const settlingTools = (log: string[]) => ({
    plain: nativeTool("test.plain", async () => ({ json: null }), { revoke: (sessionId) => void log.push(`plain revoke ${sessionId}`) }),
    keeper: nativeTool("test.keeper", async () => ({ json: null }), {
      revoke: () => void log.push("keeper revoke"),
      turnFinished: (_sessionId, completed) => void log.push(`keeper finished ${completed}`),
    }),
  });

  it("T5 turn end calls turnFinished (default revoke); cancellation and close call revoke directly", async () => {
    const log: string[] = [];
    const { plain, keeper } = settlingTools(log);
    const hang = nativeTool("test.hang", () => new Promise(() => undefined));
    const model = new ScriptedProvider([{ text: "done" }, { toolCalls: [{ name: "test__hang", arguments: "{}" }] }]);
    const runtime = await open(space.dir, [plain, keeper, hang], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.plain", "test.keeper", "test.hang"]), policy: { mode: "bypass" } });
    await session.runTurn("one");
    expect(log).toEqual([`plain revoke ${session.id}`, "keeper finished true"]);

    log.length = 0;
    session.subscribe((event) => event.type === "call_started" && session.cancel());
    const cancelled = await session.runTurn("two");
    expect(cancelled).toMatchObject({ completed: false, reason: "cancelled" });
    expect(log).toEqual([`plain revoke ${session.id}`, "keeper revoke"]);

    log.length = 0;
    await session.close();
    expect(log).toEqual([`plain revoke ${session.id}`, "keeper revoke"]);
    const revoked = [...runtime.journal.exportSession(session.id)].map((line) => JSON.parse(line)).filter((record) => record.kind === "revoked");
    expect(revoked.map((record) => record.reason)).toEqual(["turn", "cancel", "cancel", "close", "close"]);
  });

  it("T5 a host call is a turn of its own: its tool is settled when it ends (turnFinished, default revoke), revoked directly when cancelled; other tools are left alone", async () => {
    const log: string[] = [];
    const { plain, keeper } = settlingTools(log);
    const failing = nativeTool("test.failing", async () => toolError("NOPE", "not today"), {
      turnFinished: (_sessionId, completed) => void log.push(`failing finished ${completed}`),
    });
    const hang = nativeTool("test.hang", () => new Promise(() => undefined), { revoke: () => void log.push("hang revoke") });
    const runtime = await open(space.dir, [plain, keeper, failing, hang]);
    const session = await runtime.openSession({
      bundle: writeBundle(space.dir, ["test.plain", "test.keeper", "test.failing", "test.hang"]),
      policy: { mode: "bypass" },
    });
    await session.callTool("test.plain", {});
    expect(log).toEqual([`plain revoke ${session.id}`]);
    log.length = 0;
    await session.callTool("test.keeper", {});
    await session.callTool("test.failing", {});
    expect(log).toEqual(["keeper finished true", "failing finished false"]);
    log.length = 0;
    const stop = new AbortController();
    session.subscribe((event) => event.type === "call_started" && stop.abort());
    const hung = session.callTool("test.hang", {}, { signal: stop.signal });
    expect(await hung).toMatchObject({ outcome: "cancelled" });
    expect(log).toEqual(["hang revoke"]);
    const revoked = [...runtime.journal.exportSession(session.id)].map((line) => JSON.parse(line)).filter((record) => record.kind === "revoked");
    expect(revoked.map((record) => [record.tool, record.reason])).toEqual([
      ["test.plain", "turn"],
      ["test.hang", "cancel"],
    ]);
  });

  /** A native tool that holds access while it runs for `args.ms` milliseconds, and answers what it held at its end; `log` records its revokes. */
  const accessTool = (log: string[]) => {
    let access = "none";
    return nativeTool(
      "test.slow",
      async (_context, args) => {
        access = "granted";
        await new Promise((resolve) => setTimeout(resolve, (args as { ms: number }).ms));
        return { json: access };
      },
      { revoke: () => void (log.push("revoke"), (access = "revoked")), schema: { type: "object", properties: { ms: { type: "integer" } } } },
    );
  };

  it("T5 overlapping host calls of one tool: it is settled once, when the last ends, never under a call still using it; calls that never reached it settle nothing", async () => {
    const log: string[] = [];
    const runtime = await open(space.dir, [accessTool(log)]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.slow"]), policy: { mode: "bypass" } });
    await session.prepare();
    const [quick, long] = await Promise.all([session.callTool("test.slow", { ms: 10 }), session.callTool("test.slow", { ms: 200 })]);
    expect([quick.json, long.json]).toEqual(["granted", "granted"]);
    expect(log).toEqual(["revoke"]);
    log.length = 0;
    // By model alias (refused, names are exact) and already aborted (never decided): the tool was not reached.
    expect(await session.callTool("test__slow", { ms: 1 })).toMatchObject({ code: "UNKNOWN_TOOL" });
    expect(await session.callTool("test.slow", { ms: 1 }, { signal: AbortSignal.abort() })).toMatchObject({ outcome: "cancelled" });
    expect(log).toEqual([]);
  });

  it("T5 a model turn that ends while a host call uses a tool leaves the tool to that call's end", async () => {
    const log: string[] = [];
    const runtime = await open(space.dir, [accessTool(log)], { models: [new ScriptedProvider([{ text: "hello" }])] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.slow"]), policy: { mode: "bypass" } });
    await session.prepare();
    const started = new Promise<void>((resolve) => session.subscribe((event) => event.type === "call_started" && resolve()));
    const hostCall = session.callTool("test.slow", { ms: 200 });
    await started;
    expect(await session.runTurn("hi")).toMatchObject({ reason: "answered" });
    expect(log).toEqual([]);
    expect((await hostCall).json).toBe("granted");
    expect(log).toEqual(["revoke"]);
  });

  it("T5 a host call waiting for a person holds back no settlement: an earlier call's tool is settled when that call ends", async () => {
    const log: string[] = [];
    let held: ((verdict: { approved: boolean }) => void) | undefined;
    let heldAsked!: () => void;
    const secondAsked = new Promise<void>((resolve) => (heldAsked = resolve));
    const approver: Approver = (request) => {
      if ((request.args as { ms: number }).ms === 1) return { approved: true };
      heldAsked();
      return new Promise((resolve) => (held = resolve));
    };
    const runtime = await open(space.dir, [accessTool(log)], { approver });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.slow"]) });
    await session.prepare();
    const waiting = session.callTool("test.slow", { ms: 2 });
    await secondAsked;
    expect(await session.callTool("test.slow", { ms: 1 })).toMatchObject({ outcome: "succeeded", json: "granted" });
    expect(log).toEqual(["revoke"]);
    held!({ approved: false });
    expect(await waiting).toMatchObject({ outcome: "denied" });
    expect(log).toEqual(["revoke"]);
  });
  it("T5 a turn whose preparation failed ends the selected tools like any incomplete turn: turnFinished(false), else revoke", async () => {
    const log: string[] = [];
    const name = `test.${"a".repeat(70)}`;
    const plain = nativeTool(name, async () => ({ json: null }), { revoke: (sessionId) => void log.push(`plain revoke ${sessionId}`) });
    const keeper = nativeTool("test.keeper", async () => ({ json: null }), {
      revoke: () => void log.push("keeper revoke"),
      turnFinished: (_sessionId, completed) => void log.push(`keeper finished ${completed}`),
    });
    const model = new ScriptedProvider([{ text: "never" }], { maxToolNameLength: 64 });
    const runtime = await open(space.dir, [plain, keeper], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, [name, "test.keeper"]) });
    const turn = await session.runTurn("hi");
    expect(turn).toMatchObject({ completed: false, reason: "preparation_failed" });
    expect(log).toEqual([`plain revoke ${session.id}`, "keeper finished false"]);
    await runtime.journal.flush();
    const revoked = [...runtime.journal.exportSession(session.id)].map((line) => JSON.parse(line)).filter((record) => record.kind === "revoked");
    expect(revoked).toMatchObject([{ tool: name, reason: "turn" }]);
  });
});
