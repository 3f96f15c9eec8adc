import { describe, expect, it } from "vitest";
import type { Runtime } from "../src/index.js";
import { runTool } from "@openworker/tools-sdk/testing";
import type { JsonValue } from "@openworker/tools-sdk";
import { ScriptedProvider } from "../src/testing/index.js";
import { echo, hostileTools, nativeTool, openRuntime, scratchEach, writeBundle } from "./support/harness.js";

let runtime: Runtime | undefined;
const space = scratchEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const bypass = { name: "test-bypass", mode: "bypass" } as const;

function kinds(runtime: Runtime, sessionId: string, callId: string): string[] {
  return runtime.journal.timeline({ sessionId, callId }).map((record) => record.kind);
}

describe("the governed call pipeline", () => {
  it("E5 invalid arguments fail before approval and before the tool runs; the turn goes on", async () => {
    let asked = 0;
    let ran = 0;
    const counted = nativeTool(
      "test.counted",
      async () => {
        ran++;
        return { json: "ran" };
      },
      { schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } },
    );
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__counted", arguments: '{"n":"one"}' }] }, { text: "ok" }]);
    runtime = await openRuntime(space.dir, [counted], { models: [model], approver: () => (asked++, { approved: true }) });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.counted"]) });
    const turn = await session.runTurn("go");
    expect(turn.completed).toBe(true);
    expect(turn.calls[0]).toMatchObject({ outcome: "failed", code: "ARGUMENTS_INVALID" });
    expect(asked).toBe(0);
    expect(ran).toBe(0);
    expect(kinds(runtime, session.id, turn.calls[0]!.callId)).toEqual(["call_requested", "call_finished"]);
    // The model was told what was wrong, with the JSON pointer of the bad field.
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "tool", isError: true, content: expect.stringContaining("/n") });
  });

  it("E1 a native call that never returns is abandoned at its bound and stops the turn", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__hangs", arguments: "{}" }] }, { text: "never reached" }]);
    runtime = await openRuntime(space.dir, [hostileTools().hangs!], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.hangs"]), policy: bypass, callTimeoutMs: 100 });
    const turn = await session.runTurn("go");
    expect(turn).toMatchObject({ completed: false, reason: "fault", error: { code: "TOOL_TIMEOUT" } });
    expect(model.requests).toHaveLength(1);
    const records = runtime.journal.timeline({ sessionId: session.id, callId: turn.calls[0]!.callId });
    expect(records.at(-1)).toMatchObject({ kind: "call_finished", outcome: "timed_out", code: "TOOL_TIMEOUT" });
  });

  it("E2 E4 progress past its bounds is dropped and counted; the call ends as a limit breach and the turn stops; the journal keeps the events, the breach and the result", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__floods", arguments: "{}" }] }, { text: "done" }]);
    runtime = await openRuntime(space.dir, [hostileTools().floods!], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.floods"]), policy: bypass });
    const progressEvents: unknown[] = [];
    session.subscribe((event) => event.type === "call_progress" && progressEvents.push(event));
    const turn = await session.runTurn("go");
    expect(turn).toMatchObject({ completed: false, reason: "fault" });
    expect(turn.calls[0]).toMatchObject({ outcome: "limit_exceeded", code: "LIMIT_EXCEEDED", stopsTurn: true });
    expect(turn.calls[0]!.modelText).toContain("The call ended limit exceeded (LIMIT_EXCEEDED: progress past its bounds");
    expect(progressEvents).toHaveLength(64);
    const progressRecords = runtime.journal
      .timeline({ sessionId: session.id, callId: turn.calls[0]!.callId })
      .filter((record) => record.kind === "call_progress");
    expect(progressRecords).toHaveLength(65);
    // The breach is recorded: how many events were dropped and which bound they broke.
    expect(progressRecords.at(-1)).toMatchObject({ event: { droppedEvents: 436, breaches: [{ limit: "progressEvents", max: 64 }] } });
    const finished = runtime.journal.timeline({ sessionId: session.id, callId: turn.calls[0]!.callId }).at(-1);
    expect(finished).toMatchObject({ kind: "call_finished", outcome: "limit_exceeded", breach: { limit: "progressEvents" } });
    expect(finished).toHaveProperty("result");
  });

  it("E2 T7 a progress event nested deeper than the journal can carry is a counted breach, in the kit as in the runtime, never lost silently", async () => {
    const nested = (levels: number): JsonValue => (levels === 0 ? "leaf" : [nested(levels - 1)]);
    const deep = nativeTool("test.deep_progress", async (context) => {
      context.progress.report({ message: "before" });
      context.progress.report({ message: "deep", data: nested(300) });
      return { json: "done" };
    });
    runtime = await openRuntime(space.dir, [deep]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.deep_progress"]), policy: bypass });
    const report = await session.callTool("test.deep_progress", {});
    expect(report).toMatchObject({ outcome: "limit_exceeded", code: "LIMIT_EXCEEDED" });
    const records = runtime.journal.timeline({ sessionId: session.id, callId: report.callId });
    expect(records.filter((record) => record.kind === "call_progress").map((record) => (record as { event: { message?: string } }).event.message)).toEqual([
      "before",
      undefined,
    ]);
    expect(records.at(-1)).toMatchObject({
      kind: "call_finished",
      outcome: "limit_exceeded",
      breach: { limit: "progressJsonBytes", message: "progress data nests deeper than 128 levels" },
    });
    expect(runtime.journal.verify(session.id)).toMatchObject({ ok: true });
    // A partner's unit test sees the same outcome (T7).
    const kit = await runTool(deep, {});
    expect(kit).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "progressJsonBytes" } });
  });

  it("E3 a 300 KB result is a limit breach that stops the turn, not a truncation", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__huge", arguments: "{}" }] }, { text: "never" }]);
    runtime = await openRuntime(space.dir, [hostileTools().huge!], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.huge"]), policy: bypass });
    const turn = await session.runTurn("go");
    expect(turn).toMatchObject({ reason: "fault", error: { code: "LIMIT_EXCEEDED" } });
    const finished = runtime.journal.timeline({ sessionId: session.id, callId: turn.calls[0]!.callId }).at(-1)!;
    expect(finished).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "resultBytes" } });
    expect(JSON.stringify(finished).length).toBeLessThan(10_000);
  });

  it.each([
    ["throws", "TOOL_CRASHED"],
    ["cyclic", "RESULT_NOT_JSON"],
    ["bigint", "RESULT_NOT_JSON"],
  ])("E4 a tool that %s crashes the call; the turn stops and nothing is replayed", async (name, code) => {
    let calls = 0;
    const tool = hostileTools()[name]!;
    const counting = { ...tool, call: (...args: Parameters<typeof tool.call>) => (calls++, tool.call(...args)) };
    const model = new ScriptedProvider([{ toolCalls: [{ name: `test__${name}`, arguments: "{}" }] }, { text: "never" }]);
    runtime = await openRuntime(space.dir, [counting], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, [`test.${name}`]), policy: bypass });
    const turn = await session.runTurn("go");
    expect(turn).toMatchObject({ completed: false, reason: "fault", error: { code } });
    expect(calls).toBe(1);
    expect(model.requests).toHaveLength(1);
  });

  it("T1 a ToolError goes back to the model and the turn goes on", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__refuses", arguments: "{}" }] }, { text: "understood" }]);
    runtime = await openRuntime(space.dir, [hostileTools().refuses!], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.refuses"]), policy: bypass });
    const turn = await session.runTurn("go");
    expect(turn).toMatchObject({ completed: true, text: "understood" });
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "tool", content: "Error NOT_TODAY: try tomorrow", isError: true });
  });

  it("N7 an alias outside the selection is a failed call, never a search", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__echo_other", arguments: "{}" }] }, { text: "ok" }]);
    runtime = await openRuntime(space.dir, [echo, nativeTool("test.echo_other", async () => ({ json: "should not run" }))], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: bypass });
    const turn = await session.runTurn("go");
    expect(turn.calls[0]).toMatchObject({ outcome: "failed", code: "UNKNOWN_TOOL" });
    // B2: the unselected tool was never shown to the model either.
    expect(model.requests[0]!.tools.map((tool) => tool.name)).toEqual(["test__echo"]);
  });

  it("A1 bypass skips only the person: validation, limits and journaling still apply", async () => {
    let asked = 0;
    const model = new ScriptedProvider([
      {
        toolCalls: [
          { name: "test__echo", arguments: '{"text":"hi"}' },
          { name: "test__echo", arguments: '{"wrong":1}' },
        ],
      },
      { text: "done" },
    ]);
    runtime = await openRuntime(space.dir, [echo], { models: [model], approver: () => (asked++, { approved: false }) });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: bypass });
    const turn = await session.runTurn("go");
    expect(asked).toBe(0);
    expect(turn.calls.map((call) => call.outcome)).toEqual(["succeeded", "failed"]);
    const decided = runtime.journal.timeline({ sessionId: session.id, callId: turn.calls[0]!.callId }).find((record) => record.kind === "approval_decided");
    expect(decided).toMatchObject({ decision: "approved", by: "bypass" });
    // The report of a call that never reached approval (invalid arguments) has none.
    expect(turn.calls.map((call) => call.approval)).toEqual([{ approved: true, by: "bypass", who: "test-bypass", scope: "once" }, undefined]);
  });

  it("E5 A1 an approver that edits the arguments it is shown cannot change what the tool runs with", async () => {
    const received: unknown[] = [];
    const tool = nativeTool("test.transfer", async (_context, args) => (received.push(args), { json: "sent" }), {
      schema: { type: "object", properties: { amount: { type: "integer", maximum: 10 } }, required: ["amount"], additionalProperties: false },
    });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__transfer", arguments: { amount: 5 } }] }, { text: "ok" }]);
    const edits: string[] = [];
    runtime = await openRuntime(space.dir, [tool], {
      models: [model],
      approver: (request) => {
        const args = request.args as Record<string, unknown>;
        for (const edit of [() => (args.amount = 1_000_000), () => (args.extra = "injected")]) {
          try {
            edit();
          } catch (error) {
            edits.push((error as Error).name);
          }
        }
        return { approved: true };
      },
    });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.transfer"]) });
    const turn = await session.runTurn("pay");
    expect(turn.calls[0]).toMatchObject({ outcome: "succeeded" });
    expect(edits).toEqual(["TypeError", "TypeError"]); // frozen: strict-mode writes throw
    expect(received).toEqual([{ amount: 5 }]);
  });

  it("T7 E5 the testing kit's runTool reads and refuses arguments exactly as a host call does (same outcome, code and message)", async () => {
    const received: unknown[] = [];
    const tool = nativeTool("test.dated", async (_context, args) => (received.push(args), { json: "ok" }), {
      schema: { type: "object", properties: { when: { type: "string" }, n: { type: "number" } } },
    });
    runtime = await openRuntime(space.dir, [tool]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.dated"]), policy: bypass });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let deep: unknown = 1;
    for (let level = 0; level < 130; level += 1) deep = [deep];
    const cases: [string, unknown][] = [
      ["a Date", { when: new Date(0) }],
      ["NaN", { n: Number.NaN }],
      ["undefined", undefined],
      ["a BigInt", { n: 1n }],
      ["a cycle", cyclic],
      ["300 KB", { when: "x".repeat(300_000) }],
      ["130 levels", { when: deep }],
      ["a toJSON", { when: { toJSON: () => "from toJSON" } }],
      ["a wrong type", { when: 5 }],
    ];
    for (const [label, args] of cases) {
      const kit = await runTool(tool, args);
      const host = await session.callTool("test.dated", args as never);
      expect({ label, outcome: kit.outcome, code: kit.error?.code, message: kit.error?.message }).toEqual({
        label,
        outcome: host.outcome,
        code: host.code,
        message: host.message,
      });
    }
    // Both handed the tool the arguments' JSON, never the caller's object.
    expect(received.filter((_, index) => index % 2 === 0)).toEqual(received.filter((_, index) => index % 2 === 1));
    expect(received[0]).toEqual({ when: "1970-01-01T00:00:00.000Z" });
  });

  it("A1 External tools ask a person by default; a denial reaches the model and the tool never runs", async () => {
    let ran = 0;
    const tool = nativeTool("test.effect", async () => (ran++, { json: "done" }));
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__effect", arguments: "{}" }] }, { text: "ok" }]);
    const requests: unknown[] = [];
    runtime = await openRuntime(space.dir, [tool], {
      models: [model],
      approver: (request) => (requests.push(request), { approved: false, who: "ana", reason: "not now" }),
    });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.effect"]) });
    const turn = await session.runTurn("go");
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ qualifiedName: "test.effect", classification: "external", kind: "native" });
    expect(ran).toBe(0);
    expect(turn.calls[0]).toMatchObject({ outcome: "denied", code: "APPROVAL_DENIED" });
    const decided = runtime.journal.timeline({ sessionId: session.id, callId: turn.calls[0]!.callId }).find((record) => record.kind === "approval_decided");
    expect(decided).toMatchObject({ decision: "denied", by: "person", who: "ana" });
    // The report says the same, so a host need not read the journal to show it.
    expect(turn.calls[0]!.approval).toEqual({ approved: false, by: "person", who: "ana", scope: "once", reason: "not now" });
  });

  it.each([
    ["throws", () => Promise.reject(new Error("ui crashed")), "the approver failed"],
    ["never answers", () => new Promise<never>(() => undefined), "no decision within"],
    ["answers garbage", () => "yes" as never, "did not answer with an object"],
  ])("A1 an approver that %s counts as denied (fail closed)", async (_label, approver, reason) => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__echo", arguments: '{"text":"x"}' }] }, { text: "ok" }]);
    runtime = await openRuntime(space.dir, [echo], { models: [model], approver: approver as never, approvalTimeoutMs: 100 });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]) });
    const turn = await session.runTurn("go");
    expect(turn.calls[0]).toMatchObject({ outcome: "denied", message: expect.stringContaining(reason) });
    // A3: a denial nobody decided is journaled as the fail-closed rule, not as a person's answer.
    const decided = runtime.journal.timeline({ sessionId: session.id, callId: turn.calls[0]!.callId }).find((record) => record.kind === "approval_decided");
    expect(decided).toMatchObject({ decision: "denied", by: "policy", who: "runtime (fail closed)" });
  });

  it("A1 a policy rule can allow or deny a classification without asking; bypass never overrides a deny", async () => {
    const model = new ScriptedProvider([
      {
        toolCalls: [
          { name: "test__echo", arguments: '{"text":"x"}' },
          { name: "test__refuses", arguments: "{}" },
        ],
      },
      { text: "ok" },
    ]);
    runtime = await openRuntime(space.dir, [echo, hostileTools().refuses!], { models: [model] });
    const session = await runtime.openSession({
      bundle: writeBundle(space.dir, ["test.echo", "test.refuses"]),
      policy: {
        name: "p",
        mode: "bypass",
        classifications: { "test.echo": "read_only", "test.refuses": "dangerous" },
        rules: { read_only: "allow", dangerous: "deny" },
      },
    });
    const turn = await session.runTurn("go");
    expect(turn.calls.map((call) => call.outcome)).toEqual(["succeeded", "denied"]);
    expect(turn.calls.map((call) => call.approval)).toEqual([
      { approved: true, by: "policy", who: "p", scope: "once", reason: "policy allows read_only tools" },
      { approved: false, by: "policy", who: "p", scope: "once", reason: "policy denies dangerous tools" },
    ]);
  });

  it("A3 every call is journaled requested → approved → started → one terminal record, and the chain verifies", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__echo", arguments: '{"text":"hi"}' }] }, { text: "done" }]);
    runtime = await openRuntime(space.dir, [echo], { models: [model], approver: () => ({ approved: true, who: "ana" }) });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]) });
    const turn = await session.runTurn("go");
    expect(kinds(runtime, session.id, turn.calls[0]!.callId)).toEqual(["call_requested", "approval_decided", "call_started", "call_finished"]);
    await runtime.journal.flush();
    expect(runtime.journal.verify(session.id)).toMatchObject({ ok: true });
  });

  it("E6 secrets handed to the runtime never reach results, errors or the journal", async () => {
    const secret = "sk-live-0123456789abcdef";
    const leaky = nativeTool("test.leaky", async (context) => {
      context.progress.report({ message: `using ${secret}` });
      return { json: { token: secret, note: `key=${secret}` } };
    });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__leaky", arguments: "{}" }] }, { text: "ok" }]);
    runtime = await openRuntime(space.dir, [leaky], { models: [model], secrets: [secret] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.leaky"]), policy: bypass });
    const turn = await session.runTurn("go");
    expect(JSON.stringify(turn.calls)).not.toContain(secret);
    expect(JSON.stringify(model.requests[1]!.messages)).not.toContain(secret);
    await runtime.journal.flush();
    expect([...runtime.journal.exportSession(session.id)].join("\n")).not.toContain(secret);
    expect(turn.calls[0]!.json).toEqual({ token: "[redacted]", note: "key=[redacted]" });
  });

  it("a model answer with more tool calls than the cap: the extra ones are journaled and refused, never run", async () => {
    let ran = 0;
    const counted = nativeTool("test.counted", async () => (ran++, { json: "ran" }));
    const calls = Array.from({ length: 4 }, () => ({ name: "test__counted", arguments: "{}" }));
    const model = new ScriptedProvider([{ toolCalls: calls }, { text: "ok" }]);
    runtime = await openRuntime(space.dir, [counted], { models: [model], maxCallsPerAttempt: 2 });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.counted"]), policy: bypass });
    const turn = await session.runTurn("go");
    expect(ran).toBe(2);
    expect(turn.calls.map((call) => call.code ?? call.outcome)).toEqual(["succeeded", "succeeded", "TOO_MANY_CALLS", "TOO_MANY_CALLS"]);
    // Every call id the model used gets an answer (providers require one per call).
    expect(model.requests[1]!.messages.filter((message) => message.role === "tool")).toHaveLength(4);
    expect(runtime.journal.calls(session.id).map((call) => call.outcome)).toEqual(["succeeded", "succeeded", "failed", "failed"]);
  });

  it("A3 a runaway answer (more than 8 × the cap) is dropped whole: nothing runs or is journaled as a call, and the conversation goes on without it", async () => {
    let ran = 0;
    const counted = nativeTool("test.counted", async () => (ran++, { json: "ran" }));
    const calls = Array.from({ length: 17 }, () => ({ name: "test__counted", arguments: "{}" }));
    const model = new ScriptedProvider([{ text: "thinking", toolCalls: calls }, { text: "sorry, one at a time" }]);
    runtime = await openRuntime(space.dir, [counted], { models: [model], maxCallsPerAttempt: 2 });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.counted"]), policy: bypass });
    const turn = await session.runTurn("go");
    expect(turn).toMatchObject({ completed: false, reason: "model_error", calls: [], error: { code: "MODEL_TOO_MANY_CALLS" } });
    expect(turn.error!.message).toContain("17 tool calls; an answer may hold at most 16 (2 run)");
    expect(ran).toBe(0);
    expect(runtime.journal.calls(session.id)).toEqual([]);
    // The next turn's conversation holds no tool call without its answer.
    const next = await session.runTurn("again");
    expect(next).toMatchObject({ completed: true, text: "sorry, one at a time" });
    expect(JSON.stringify(model.requests[1]!.messages)).not.toContain("test__counted");
  });

  it("E5 arguments over 256 KB are refused unread; the journal keeps their size, not the bytes", async () => {
    const huge = JSON.stringify({ text: "z".repeat(300 * 1024) });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__echo", arguments: huge }] }, { text: "ok" }]);
    runtime = await openRuntime(space.dir, [echo], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: bypass });
    const turn = await session.runTurn("go");
    expect(turn.calls[0]).toMatchObject({ outcome: "failed", code: "ARGUMENTS_TOO_LARGE" });
    const requested = runtime.journal.timeline({ sessionId: session.id, callId: turn.calls[0]!.callId })[0]!;
    expect(requested).toMatchObject({ kind: "call_requested", args: { omitted: expect.stringMatching(/^\d+ bytes of arguments$/) } });
    expect(JSON.stringify(requested).length).toBeLessThan(2_000);
  });

  it("callTool runs a host-driven call through the same pipeline", async () => {
    runtime = await openRuntime(space.dir, [echo]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: bypass });
    const ok = await session.callTool("test.echo", { text: "direct" });
    expect(ok).toMatchObject({ outcome: "succeeded", json: { text: "direct" } });
    const bad = await session.callTool("test.echo", { nope: true });
    expect(bad).toMatchObject({ outcome: "failed", code: "ARGUMENTS_INVALID" });
    const unselected = await session.callTool("test.other", {});
    expect(unselected).toMatchObject({ outcome: "failed", code: "UNKNOWN_TOOL" });
    expect(unselected.message).not.toContain("did you mean");
  });

  it("N7 a host call that names a tool by its model alias is refused (names are exact) with the qualified name as a hint", async () => {
    runtime = await openRuntime(space.dir, [echo]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: bypass });
    const report = await session.callTool("test__echo", { text: "x" });
    expect(report).toMatchObject({ outcome: "failed", code: "UNKNOWN_TOOL" });
    expect(report.message).toContain('did you mean "test.echo"? ("test__echo" is its model alias)');
  });
});
