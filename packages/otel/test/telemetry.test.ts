import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { TurnResult } from "@openworker/runtime";
import { RuntimeTelemetry, type InstrumentedSession } from "../src/index.js";
import { OtlpReceiver, type ExportedSpan } from "./support/otlp-receiver.js";
import { CANARIES, openScenario, otelSdk, type Scenario } from "./support/scenario.js";

// OTLP's span kinds and status codes (the JSON encoding gives their numbers).
const KIND = { internal: 1, client: 3 };
const STATUS_ERROR = 2;

let receiver: OtlpReceiver;
let scenario: Scenario | undefined;
let sdk: ReturnType<typeof otelSdk>;

beforeEach(async () => {
  receiver = await OtlpReceiver.start();
  sdk = otelSdk(receiver.url);
});

afterEach(async () => {
  await sdk.shutdown();
  await scenario?.close();
  scenario = undefined;
  await receiver.close();
});

/** Runs the scenario's turn and a host call under `telemetry`, then flushes the SDK. */
async function runScenario(telemetry: RuntimeTelemetry): Promise<{ turn: TurnResult; hostCallId: string }> {
  scenario = await openScenario();
  const stop = telemetry.instrument(scenario.session);
  const turn = await scenario.session.runTurn("Look up today's badge, then export the desk log.");
  const host = await scenario.session.callTool("probe.status", {});
  stop();
  await sdk.flush();
  return { turn, hostCallId: host.callId };
}

function byName(spans: readonly ExportedSpan[], name: string): ExportedSpan[] {
  return spans.filter((span) => span.name === name);
}

function eventsOf(span: ExportedSpan | undefined, name: string) {
  return (span?.events ?? []).filter((event) => event.name === name).map((event) => event.attributes);
}

describe("RuntimeTelemetry over OTLP/HTTP", () => {
  it("A1 A3 E3 E5 E6 L2 M2 a full turn (MCP and native calls, an approval, a denial, invalid arguments, a limit breach) exports its span tree with journal ids, and no secret or fact", async () => {
    const { turn, hostCallId } = await runScenario(new RuntimeTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider }));
    const { session, runtime, model } = scenario!;
    expect(turn).toMatchObject({ completed: false, reason: "fault" });
    expect(turn.calls.map((call) => [call.qualifiedName, call.outcome, call.code])).toEqual([
      ["probe.status", "succeeded", undefined],
      ["desk.lookup", "succeeded", undefined],
      ["desk.lookup", "failed", "ARGUMENTS_INVALID"],
      ["desk.erase", "denied", "APPROVAL_DENIED"],
      ["desk.export", "limit_exceeded", "LIMIT_EXCEEDED"],
    ]);
    // The canaries were really in play: the fact reached the model, the secrets the tools.
    expect(JSON.stringify(model.requests[0]!.facts)).toContain(CANARIES.fact);
    expect(receiver.received.length).toBeGreaterThan(0);
    expect(receiver.received.every((request) => request.contentType.startsWith("application/json"))).toBe(true);

    const spans = receiver.spans();
    const [root, ...others] = byName(spans, "invoke_agent Front desk");
    expect(others).toEqual([]);
    expect(root).toMatchObject({
      parentSpanId: undefined,
      kind: KIND.internal,
      status: { code: STATUS_ERROR },
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "Front desk",
        "gen_ai.conversation.id": session.id,
        "gen_ai.provider.name": "scripted",
        "gen_ai.request.model": "scripted-1",
        "openworker.session.id": session.id,
        "openworker.turn.id": turn.turnId,
        "openworker.turn.reason": "fault",
        "error.type": "LIMIT_EXCEEDED",
      },
    });
    // M2: the provider that could not start is a diagnostic of the turn, by namespace.
    expect(eventsOf(root, "openworker.diagnostic")).toContainEqual({ "openworker.diagnostic.code": "PROVIDER_UNAVAILABLE", "openworker.mcp.provider": "gone" });

    const turnSpans = spans.filter((span) => span.traceId === root!.traceId && span !== root);
    expect(turnSpans.every((span) => span.parentSpanId === root!.spanId)).toBe(true);
    const attempts = turnSpans.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
    expect(attempts.map((span) => [span.name, span.kind, span.attributes["openworker.attempt"], span.attributes["openworker.attempt.tool_calls"]])).toEqual([
      ["chat scripted-1", KIND.client, 1, 4],
      ["chat scripted-1", KIND.client, 2, 1],
    ]);
    expect(attempts[0]!.attributes).toMatchObject({ "gen_ai.provider.name": "scripted", "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30 });

    // One execute_tool span per governed call, in order, each named by the journal's call id.
    const calls = turnSpans.filter((span) => span.attributes["gen_ai.operation.name"] === "execute_tool");
    expect(calls.map((span) => span.attributes["gen_ai.tool.call.id"])).toEqual(turn.calls.map((call) => call.callId));
    expect(
      calls.map((span) => [
        span.name,
        span.kind,
        span.attributes["gen_ai.tool.name"],
        span.attributes["openworker.tool.kind"],
        span.attributes["openworker.call.outcome"],
        span.attributes["openworker.attempt"],
      ]),
    ).toEqual([
      ["execute_tool probe.status", KIND.internal, "probe.status", "mcp", "succeeded", 1],
      ["execute_tool desk.lookup", KIND.internal, "desk.lookup", "native", "succeeded", 1],
      ["execute_tool desk.lookup", KIND.internal, "desk.lookup", "native", "failed", 1],
      ["execute_tool desk.erase", KIND.internal, "desk.erase", "native", "denied", 1],
      ["execute_tool desk.export", KIND.internal, "desk.export", "native", "limit_exceeded", 2],
    ]);
    for (const span of calls) expect(span.attributes).toMatchObject({ "openworker.session.id": session.id, "openworker.turn.id": turn.turnId });
    // A3: every exported call id leads to its journal records.
    for (const call of turn.calls) {
      const records = runtime.journal.timeline({ sessionId: session.id, callId: call.callId }).map((record) => record.kind);
      expect(records, call.callId).toEqual(
        call.outcome === "denied" ? ["call_requested", "approval_decided"] : expect.arrayContaining(["call_requested", "call_finished"]),
      );
    }

    const [mcp, lookup, invalid, erase, exported] = calls;
    // A1: who decided (a person, the policy), never their name.
    expect(eventsOf(mcp, "openworker.approval.decided")).toEqual([
      { "openworker.approval.decision": "approved", "openworker.approval.by": "policy", "openworker.approval.scope": "once" },
    ]);
    expect(eventsOf(mcp, "openworker.approval.requested")).toEqual([]);
    expect(lookup!.events.map((event) => event.name)).toEqual([
      "openworker.validation",
      "openworker.approval.requested",
      "openworker.approval.decided",
      "openworker.call.started",
    ]);
    expect(eventsOf(lookup, "openworker.validation")).toEqual([{ "openworker.validation.result": "passed" }]);
    expect(eventsOf(lookup, "openworker.approval.decided")).toEqual([
      { "openworker.approval.decision": "approved", "openworker.approval.by": "person", "openworker.approval.scope": "once" },
    ]);
    expect(lookup!.attributes["openworker.call.wait_ms"]).toBeGreaterThanOrEqual(0);
    expect(lookup!.status.code).not.toBe(STATUS_ERROR);
    // E5: invalid arguments fail validation, and nobody is asked.
    expect(invalid!.events.map((event) => event.name)).toEqual(["openworker.validation"]);
    expect(eventsOf(invalid, "openworker.validation")).toEqual([{ "openworker.validation.result": "failed", "error.type": "ARGUMENTS_INVALID" }]);
    expect(invalid).toMatchObject({ status: { code: STATUS_ERROR }, attributes: { "error.type": "ARGUMENTS_INVALID" } });
    // The denial: decided, never started.
    expect(eventsOf(erase, "openworker.approval.decided")).toEqual([
      { "openworker.approval.decision": "denied", "openworker.approval.by": "person", "openworker.approval.scope": "once" },
    ]);
    expect(eventsOf(erase, "openworker.call.started")).toEqual([]);
    expect(erase).toMatchObject({ status: { code: STATUS_ERROR }, attributes: { "error.type": "APPROVAL_DENIED" } });
    // E3: the limit breach names the limit.
    expect(eventsOf(exported, "openworker.limit.breach")).toEqual([{ "openworker.limit.name": "resultBytes", "error.type": "LIMIT_EXCEEDED" }]);
    expect(exported).toMatchObject({ status: { code: STATUS_ERROR }, attributes: { "error.type": "LIMIT_EXCEEDED" } });

    // A host call has no turn: its span is a root of its own trace, with the journal's ids.
    const hostSpan = spans.find((span) => span.attributes["gen_ai.tool.call.id"] === hostCallId);
    expect(hostSpan).toMatchObject({
      name: "execute_tool probe.status",
      parentSpanId: undefined,
      attributes: { "openworker.session.id": session.id, "openworker.call.outcome": "succeeded" },
    });
    expect(hostSpan!.traceId).not.toBe(root!.traceId);

    // E6, L2: neither the secrets, nor the fact, nor who approved, nor any argument or result.
    const exportedText = receiver.everything;
    for (const [name, canary] of Object.entries(CANARIES)) expect(exportedText.includes(canary), name).toBe(false);
    expect(spans.some((span) => "gen_ai.tool.call.arguments" in span.attributes || "gen_ai.tool.call.result" in span.attributes)).toBe(false);
  });

  it("A1 A3 E3 M2 metrics count calls by outcome, denials, limit breaches and unavailable providers, with GenAI durations and token usage", async () => {
    await runScenario(new RuntimeTelemetry({ meterProvider: sdk.meterProvider }));
    // Metrics alone: no tracer provider, no spans.
    expect(receiver.spans()).toEqual([]);
    const calls = receiver
      .points("openworker.tool.calls")
      .map((point) => [
        point.attributes["gen_ai.tool.name"],
        point.attributes["openworker.call.outcome"],
        point.attributes["openworker.tool.kind"],
        point.value,
      ]);
    expect(calls).toEqual(
      expect.arrayContaining([
        ["probe.status", "succeeded", "mcp", 2],
        ["desk.lookup", "succeeded", "native", 1],
        ["desk.lookup", "failed", "native", 1],
        ["desk.erase", "denied", "native", 1],
        ["desk.export", "limit_exceeded", "native", 1],
      ]),
    );
    expect(calls).toHaveLength(5);
    expect(receiver.points("openworker.approval.denials")).toEqual([
      { attributes: { "gen_ai.tool.name": "desk.erase", "openworker.approval.by": "person" }, value: 1 },
    ]);
    expect(receiver.points("openworker.limit.breaches")).toEqual([
      { attributes: { "openworker.limit.name": "resultBytes", "gen_ai.tool.name": "desk.export" }, value: 1 },
    ]);
    expect(receiver.points("openworker.provider.unavailable")).toEqual([{ attributes: { "openworker.mcp.provider": "gone" }, value: 1 }]);
    expect(receiver.points("gen_ai.client.operation.duration")).toEqual([
      { attributes: { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted", "gen_ai.request.model": "scripted-1" }, value: 2 },
    ]);
    expect(receiver.unit("gen_ai.client.operation.duration")).toBe("s");
    expect(receiver.points("gen_ai.client.token.usage").map((point) => [point.attributes["gen_ai.token.type"], point.value])).toEqual(
      expect.arrayContaining([
        ["input", 2],
        ["output", 2],
      ]),
    );
    expect(receiver.points("gen_ai.invoke_agent.duration")).toEqual([
      {
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": "Front desk",
          "openworker.turn.reason": "fault",
          "error.type": "LIMIT_EXCEEDED",
        },
        value: 1,
      },
    ]);
    const toolDurations = receiver.points("gen_ai.execute_tool.duration");
    expect(toolDurations.reduce((sum, point) => sum + point.value, 0)).toBe(6);
    expect(toolDurations).toContainEqual({
      attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "desk.erase", "error.type": "APPROVAL_DENIED" },
      value: 1,
    });
    const exportedText = receiver.everything;
    for (const [name, canary] of Object.entries(CANARIES)) expect(exportedText.includes(canary), name).toBe(false);
  });

  it("E6 L2 captured content is the journal's redacted arguments and results; facts are still never exported", async () => {
    await runScenario(new RuntimeTelemetry({ tracerProvider: sdk.tracerProvider, captureContent: true, maxContentLength: 200 }));
    const calls = receiver.spans().filter((span) => span.attributes["gen_ai.operation.name"] === "execute_tool");
    const lookup = calls.find((span) => span.attributes["openworker.call.outcome"] === "succeeded" && span.attributes["gen_ai.tool.name"] === "desk.lookup")!;
    expect(JSON.parse(String(lookup.attributes["gen_ai.tool.call.arguments"]))).toEqual({ query: "badge of the key [redacted]" });
    expect(JSON.parse(String(lookup.attributes["gen_ai.tool.call.result"]))).toEqual({ found: true, badge: "[redacted]" });
    const mcp = calls.find((span) => span.attributes["gen_ai.tool.name"] === "probe.status")!;
    expect(JSON.parse(String(mcp.attributes["gen_ai.tool.call.result"]))).toMatchObject({ ok: true, key: "[redacted]" });
    // A call that did not succeed has no result to capture.
    const exported = calls.find((span) => span.attributes["gen_ai.tool.name"] === "desk.export")!;
    expect(exported.attributes["gen_ai.tool.call.result"]).toBeUndefined();
    expect(exported.attributes["gen_ai.tool.call.arguments"]).toBe("{}");
    const exportedText = receiver.everything;
    for (const [name, canary] of Object.entries(CANARIES)) expect(exportedText.includes(canary), name).toBe(false);
  });

  it("E6 captured content longer than maxContentLength is clipped, saying how long it was", async () => {
    scenario = await openScenario();
    const stop = new RuntimeTelemetry({ tracerProvider: sdk.tracerProvider, captureContent: true, maxContentLength: 40 }).instrument(scenario.session);
    await scenario.session.callTool("desk.lookup", { query: "q".repeat(100) });
    stop();
    await sdk.flush();
    const [span] = receiver.spans();
    expect(span!.attributes["gen_ai.tool.call.arguments"]).toBe(`{"query":"${"q".repeat(30)}… (clipped, 112 characters)`);
    expect(span!.attributes["gen_ai.tool.call.result"]).toBe('{"found":true,"badge":"[redacted]"}');
  });
});

describe("RuntimeTelemetry without providers", () => {
  it("does not subscribe to the session, so the runtime builds no event for it", () => {
    const telemetry = new RuntimeTelemetry();
    const session = { subscribe: vi.fn(() => () => true), bundle: { manifest: { name: "Front desk" } } } as unknown as InstrumentedSession;
    expect(telemetry.enabled).toBe(false);
    telemetry.instrument(session)();
    expect(session.subscribe).not.toHaveBeenCalled();
  });

  it("refuses a maxContentLength that is not a positive whole number, naming it", () => {
    expect(() => new RuntimeTelemetry({ captureContent: true, maxContentLength: 0 })).toThrow(/maxContentLength must be a positive whole number/);
  });
});
