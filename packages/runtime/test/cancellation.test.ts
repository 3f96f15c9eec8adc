import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { describe, expect, it, vi } from "vitest";
import { Runtime } from "../src/index.js";
import { ScriptedProvider } from "../src/testing/index.js";
import { nativeTool, openRuntime, scratchEach, writeBundle, writeHostEntry } from "./support/harness.js";

// Cancellation at each stage a host meets it: a cancelled turn stops asking and starting,
// a session closing races a call, and a caller who cancels stops waiting at once.

let runtime: Runtime | undefined;
const space = scratchEach(async () => {
  vi.restoreAllMocks();
  await runtime?.close();
  runtime = undefined;
});

const bypass = { name: "test-bypass", mode: "bypass" } as const;
const server = path.resolve(import.meta.dirname, "fixtures/mutable-server.mjs");

/** The call ids of the model's tool calls, and of the answers, in the next request's conversation. */
const askedIds = (model: ScriptedProvider) =>
  model.requests[1]!.messages.flatMap((message) => (message.role === "assistant" ? (message.toolCalls ?? []).map((call) => call.id) : []));
const toolAnswers = (model: ScriptedProvider) => model.requests[1]!.messages.filter((message) => message.role === "tool");
const answeredIds = (model: ScriptedProvider) => toolAnswers(model).map((message) => (message.role === "tool" ? message.toolCallId : ""));

describe("a cancelled turn", () => {
  it("T5 cancel with a turn id cancels only that turn: a stop that comes late cannot cancel the next one", async () => {
    let release: () => void = () => {};
    const gate = nativeTool("test.gate", () => new Promise((resolve) => (release = () => resolve({ json: "released" }))));
    const model = new ScriptedProvider([
      { toolCalls: [{ name: "test__gate", arguments: "{}" }] },
      { text: "first done" },
      { toolCalls: [{ name: "test__gate", arguments: "{}" }] },
      { text: "never" },
    ]);
    runtime = await openRuntime(space.dir, [gate], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.gate"]), policy: bypass });
    const started: string[] = [];
    session.subscribe((event) => event.type === "call_started" && started.push(event.turnId));
    const first = session.runTurn("one");
    await vi.waitFor(() => expect(started).toHaveLength(1));
    expect(session.cancel("wrong turn", { turnId: "ses_other.t9" })).toBe(false);
    release();
    const firstResult = await first;
    expect(firstResult).toMatchObject({ completed: true, text: "first done" });
    // The user's stop for the first turn arrives while the second runs: it is refused.
    const second = session.runTurn("two");
    await vi.waitFor(() => expect(started).toHaveLength(2));
    expect(session.cancel("late stop", { turnId: firstResult.turnId })).toBe(false);
    expect(session.cancel("stop the second", { turnId: started[1] })).toBe(true);
    expect(await second).toMatchObject({ completed: false, reason: "cancelled" });
    expect(session.cancel()).toBe(false);
  });

  it("E4 T5 cancelled while a person decides: nobody else is asked, no further call starts, every call id gets an answer", async () => {
    let ran = 0;
    const slow = nativeTool("test.slow", async () => (ran++, { json: "ran" }));
    const calls = ["a", "b", "c"].map(() => ({ name: "test__slow", arguments: "{}" }));
    const model = new ScriptedProvider([{ toolCalls: calls }, { text: "understood" }]);
    const turn = new AbortController();
    const asked: boolean[] = [];
    // The person takes their time; the host cancels the turn meanwhile.
    const approver = (request: { signal: AbortSignal }) => {
      asked.push(request.signal.aborted);
      turn.abort();
      return new Promise<never>(() => {});
    };
    runtime = await openRuntime(space.dir, [slow], { models: [model], approver });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.slow"]) });
    const result = await session.runTurn("go", { signal: turn.signal });
    expect(result.reason).toBe("cancelled");
    expect(asked).toEqual([false]);
    expect(ran).toBe(0);
    expect(result.calls).toHaveLength(1);
    expect(runtime.journal.calls(session.id)).toHaveLength(1);
    // The next turn's conversation answers all three call ids (providers require it).
    expect((await session.runTurn("again")).text).toBe("understood");
    expect(answeredIds(model)).toEqual(askedIds(model));
    expect(askedIds(model)).toHaveLength(3);
    expect(toolAnswers(model)[1]!.content).toContain("Not run: the turn was cancelled");
  });

  it("E4 a fault stops the turn: the calls after it are answered in the conversation, never run nor journaled", async () => {
    let ran = 0;
    const crashes = nativeTool("test.crashes", async () => {
      throw new Error("boom");
    });
    const counted = nativeTool("test.counted", async () => (ran++, { json: "ran" }));
    const calls = [
      { name: "test__crashes", arguments: "{}" },
      { name: "test__counted", arguments: "{}" },
    ];
    const model = new ScriptedProvider([{ toolCalls: calls }, { text: "noted" }]);
    runtime = await openRuntime(space.dir, [crashes, counted], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.crashes", "test.counted"]), policy: bypass });
    const result = await session.runTurn("go");
    expect(result.reason).toBe("fault");
    expect(ran).toBe(0);
    expect(runtime.journal.calls(session.id)).toHaveLength(1);
    await session.runTurn("again");
    expect(answeredIds(model)).toEqual(askedIds(model));
    expect(askedIds(model)).toHaveLength(2);
    expect(toolAnswers(model)[1]!.content).toContain("Not run: the turn stopped at an earlier call (TOOL_CRASHED)");
  });

  it("T5 a cancel from the message event, as the model answers, ends the turn cancelled: cancel() said it would, and the tools are revoked", async () => {
    const hooks: string[] = [];
    const keeper = nativeTool("test.keeper", async () => ({ json: null }), {
      revoke: () => void hooks.push("revoke"),
      turnFinished: (_sessionId, completed) => void hooks.push(`finished ${completed}`),
    });
    runtime = await openRuntime(space.dir, [keeper], { models: [new ScriptedProvider([{ text: "all done" }])] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.keeper"]), policy: bypass });
    const answers: boolean[] = [];
    session.subscribe((event) => event.type === "message" && answers.push(session.cancel()));
    const turn = await session.runTurn("go");
    expect(answers).toEqual([true]);
    expect(turn).toMatchObject({ completed: false, reason: "cancelled" });
    expect(hooks).toEqual(["revoke"]);
  });

  it("T5 a turn cancelled while it prepares revokes the selected native tools directly, though its selection never landed", async () => {
    const log: string[] = [];
    // A tool with expiring app consent keeps its access across a completed turn (T5 allows it)...
    const app = nativeTool("test.app", async () => ({ json: "which file?" }), {
      turnFinished: (_sessionId, completed) => void log.push(`finished ${completed}`),
      revoke: () => void log.push("revoke"),
    });
    const hang = path.join(space.dir, "hang");
    const launched = path.join(space.dir, "launched");
    const registry = new ToolRegistry();
    registry.register(app);
    // ...and the next turn is cancelled while a provider holds its preparation: down at the
    // first turn (which goes on without it), started but never answering at the second.
    registry.registerMcp({ namespace: "stuck", program: "/bin/sh", args: ["-c", 'if [ -e "$0" ]; then : > "$1"; exec sleep 60; fi; exit 3', hang, launched] });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__app", arguments: "{}" }] }, { text: "Which file do you mean?" }, { text: "never" }]);
    runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: path.join(space.dir, "journal.db") },
      hostEntry: writeHostEntry(space.dir),
      models: [model],
      mcp: { connectTimeoutMs: 60_000 },
    });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.app", "stuck.tool"]), policy: bypass });
    expect(await session.runTurn("rename the file")).toMatchObject({ reason: "answered" });
    expect(log.splice(0)).toEqual(["finished true"]);
    writeFileSync(hang, "");
    const second = session.runTurn("the report one");
    await vi.waitFor(() => expect(existsSync(launched)).toBe(true), { timeout: 10_000 });
    expect(session.cancel("the user pressed stop")).toBe(true);
    expect(await second).toMatchObject({ completed: false, reason: "cancelled" });
    expect(log).toEqual(["revoke"]);
    await runtime.journal.flush();
    const revoked = [...runtime.journal.exportSession(session.id)].map((line) => JSON.parse(line)).filter((record) => record.kind === "revoked");
    expect(revoked).toMatchObject([{ tool: "test.app", reason: "cancel" }]);
  });

  it("M4 a turn cancelled before it began starts no MCP provider", async () => {
    const started = path.join(space.dir, "started");
    const registry = new ToolRegistry();
    // A provider that would leave a mark the moment it started.
    registry.registerMcp({ namespace: "late", program: process.execPath, args: ["-e", `require("node:fs").writeFileSync(${JSON.stringify(started)}, "x")`] });
    runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: path.join(space.dir, "journal.db") },
      hostEntry: writeHostEntry(space.dir),
      models: [new ScriptedProvider([{ text: "never" }])],
    });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["late.anything"]), policy: bypass });
    const result = await session.runTurn("go", { signal: AbortSignal.abort() });
    expect(result.reason).toBe("cancelled");
    await session.close();
    expect(existsSync(started)).toBe(false);
  });
});

describe("host-driven calls and a closing session", () => {
  it("A3 a call and the session's close in the same tick: the journal never says the tool was called when it was not", async () => {
    let ran = 0;
    const counted = nativeTool("test.counted", async () => (ran++, { json: "ran" }));
    runtime = await openRuntime(space.dir, [counted]);
    for (let round = 0; round < 5; round += 1) {
      const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.counted"], `bundle-${round}`), policy: bypass });
      await session.prepare();
      const before = ran;
      const call = session.callTool("test.counted", {});
      const closed = session.close();
      const report = await call;
      await closed;
      const records = runtime.journal.timeline({ sessionId: session.id, callId: report.callId });
      const finished = records.at(-1) as { kind: string; outcome?: string; message?: string };
      expect(finished.kind).toBe("call_finished");
      if (ran === before) {
        // Never called: not journaled as started, or, when the start was already durable,
        // finished with a message that says the tool was not called.
        expect(finished.outcome, `round ${round}`).toBe("cancelled");
        expect(finished.message).toMatch(/the tool was not called|cancelled before it started/);
        if (records.some((record) => record.kind === "call_started")) expect(finished.message).toContain("the tool was not called");
      }
    }
    expect(runtime.journal.verify().ok).toBe(true);
  });

  it.each([
    ["bypass", bypass],
    ["ask", {}],
  ] as const)(
    "A1 A3 a host call whose signal has already aborted (%s) is never decided, announced for approval or journaled as started: it ends cancelled",
    async (_mode, policy) => {
      let ran = 0;
      let asked = 0;
      const counted = nativeTool("test.counted", async () => (ran++, { json: "ran" }));
      runtime = await openRuntime(space.dir, [counted], { approver: () => (asked++, { approved: true }) });
      const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.counted"]), policy });
      await session.prepare();
      const events: string[] = [];
      session.subscribe((event) => events.push(event.type));
      const report = await session.callTool("test.counted", {}, { signal: AbortSignal.abort() });
      expect(report).toMatchObject({ outcome: "cancelled", message: "the call was cancelled before it started" });
      expect(report.approval).toBeUndefined();
      expect(ran + asked).toBe(0);
      expect(events).toEqual(["call_requested", "call_finished"]);
      expect(runtime.journal.timeline({ sessionId: session.id, callId: report.callId }).map((record) => record.kind)).toEqual([
        "call_requested",
        "call_finished",
      ]);
    },
  );

  it("prepare() on a closed session rejects (it never throws where a host awaits it)", async () => {
    runtime = await openRuntime(space.dir, []);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, []), policy: bypass });
    await session.close();
    const prepared = session.prepare();
    await expect(prepared).rejects.toMatchObject({ code: "SESSION_CLOSED" });
  });

  it("A1 a host call asked of a person leaves no listener behind on the session's signal", async () => {
    const counted = nativeTool("test.counted", async () => ({ json: "ran" }));
    runtime = await openRuntime(space.dir, [counted], { approver: () => ({ approved: true, scope: "once" }) });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.counted"]) });
    await session.callTool("test.counted", {});
    // Count the "abort" listeners each signal holds, as they come and go.
    const live = new Map<EventTarget, number>();
    const add = EventTarget.prototype.addEventListener;
    const remove = EventTarget.prototype.removeEventListener;
    vi.spyOn(EventTarget.prototype, "addEventListener").mockImplementation(function (this: EventTarget, type, listener, options) {
      if (type === "abort") live.set(this, (live.get(this) ?? 0) + 1);
      return add.call(this, type, listener, options);
    });
    vi.spyOn(EventTarget.prototype, "removeEventListener").mockImplementation(function (this: EventTarget, type, listener, options) {
      if (type === "abort") live.set(this, (live.get(this) ?? 0) - 1);
      return remove.call(this, type, listener, options);
    });
    for (let index = 0; index < 50; index += 1) expect((await session.callTool("test.counted", {})).outcome).toBe("succeeded");
    expect(Math.max(0, ...live.values())).toBeLessThanOrEqual(1);
  });

  it("E4 a host's long-lived signal passed to every call keeps no link per call, and still cancels the call in flight", async () => {
    let release: (() => void) | undefined;
    const slow = nativeTool(
      "test.slow",
      (context) =>
        new Promise((resolve) => {
          release = () => resolve({ json: "late" });
          context.signal.addEventListener("abort", () => resolve({ json: "stopped" }));
        }),
    );
    const counted = nativeTool("test.counted", async () => ({ json: "ran" }));
    runtime = await openRuntime(space.dir, [counted, slow]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.counted", "test.slow"]), policy: bypass });
    const app = new AbortController();
    for (let index = 0; index < 200; index += 1) expect((await session.callTool("test.counted", {}, { signal: app.signal })).outcome).toBe("succeeded");
    for (let index = 0; index < 20; index += 1) await session.prepare({ signal: app.signal });
    // AbortSignal.any on Node 20 left one entry per call on each source signal, never removed
    // (nodejs/node#55351): about 80 bytes a call for the life of the process.
    const dependants = Object.getOwnPropertySymbols(app.signal).find((symbol) => symbol.description === "kDependantSignals");
    expect(dependants === undefined ? 0 : (app.signal as unknown as Record<symbol, Set<unknown>>)[dependants]!.size).toBe(0);
    const inFlight = session.callTool("test.slow", {}, { signal: app.signal });
    await vi.waitFor(() => expect(release).toBeDefined());
    app.abort(new Error("the app is shutting down"));
    expect(await inFlight).toMatchObject({ outcome: "cancelled" });
    release!();
  });

  it("M2 a prepare() cancelled while it discovers rejects and leaves the session's latest preparation in place", async () => {
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "relist", program: path.resolve(import.meta.dirname, "../../mcp-bridge/test/fixtures/slow-relist.sh") });
    runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: path.join(space.dir, "relist.db") },
      hostEntry: writeHostEntry(space.dir),
    });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["relist.ping"]), policy: bypass });
    await session.prepare();
    const caller = new AbortController();
    const cancelled = session.prepare({ signal: caller.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    caller.abort(new Error("the host gave up"));
    await expect(cancelled).rejects.toThrow("the host gave up");
    expect(await session.callTool("relist.ping", {})).toMatchObject({ outcome: "succeeded" });
    await runtime.journal.flush();
    const prepared = [...runtime.journal.exportSession(session.id)]
      .map((line) => JSON.parse(line) as { kind: string })
      .filter((record) => record.kind === "turn_prepared");
    expect(prepared).toHaveLength(1); // the cancelled one journaled nothing, and the call did not need to prepare again
  });

  it("E4 a host call whose caller cancels while the shared preparation runs rejects at once; the preparation goes on for the others", async () => {
    const ready = path.join(space.dir, "provider-ready");
    const registry = new ToolRegistry();
    // A provider slow to start, which marks the moment it is past its slow part.
    registry.registerMcp({ namespace: "mut", program: "/bin/sh", args: ["-c", 'sleep 1.5; : > "$2"; exec "$0" "$1"', process.execPath, server, ready] });
    runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: path.join(space.dir, "journal.db") },
      hostEntry: writeHostEntry(space.dir),
    });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["mut.status_get"]), policy: bypass });
    const caller = new AbortController();
    let providerReadyWhenRejected: boolean | undefined;
    const impatient = session.callTool("mut.status_get", {}, { signal: caller.signal }).then(
      () => "answered",
      () => ((providerReadyWhenRejected = existsSync(ready)), "rejected"),
    );
    const patient = session.callTool("mut.status_get", {});
    setTimeout(() => caller.abort(), 100);
    expect(await impatient).toBe("rejected");
    expect(providerReadyWhenRejected).toBe(false);
    expect((await patient).outcome).toBe("succeeded");
  });

  it("T5 a host call cancelled during the shared preparation, then close: close waits for the preparation and revokes its tools", async () => {
    const revoked: string[] = [];
    const revocable = nativeTool("test.revocable", async () => ({ json: "ran" }), { revoke: (sessionId: string) => void revoked.push(sessionId) });
    const registry = new ToolRegistry();
    registry.register(revocable);
    registry.registerMcp({ namespace: "mut", program: "/bin/sh", args: ["-c", 'sleep 1; exec "$0" "$1"', process.execPath, server] });
    runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: path.join(space.dir, "journal.db") },
      hostEntry: writeHostEntry(space.dir),
    });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.revocable", "mut.status_get"]), policy: bypass });
    const caller = new AbortController();
    const call = session.callTool("test.revocable", {}, { signal: caller.signal });
    setTimeout(() => caller.abort(), 100);
    await expect(call).rejects.toBeDefined();
    await session.close();
    expect(revoked).toEqual([session.id]);
    await runtime.journal.flush();
    const kinds = [...runtime.journal.exportSession(session.id)].map((line) => JSON.parse(line).kind);
    expect(kinds).toContain("revoked");
  });
});
