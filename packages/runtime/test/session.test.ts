import { writeFileSync } from "node:fs";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import { Runtime, type Approver, type ModelProvider, type ModelRequest } from "../src/index.js";
import { ScriptedProvider } from "../src/testing/index.js";
import { runtimesEach } from "./session-helpers.js";
import { echo, nativeTool, writeBundle, writeHostEntry } from "./support/harness.js";

const { space, runtimes, open } = runtimesEach();

describe("sessions", () => {
  it("a host calls with interface-typed arguments, or none, without a cast (read as their JSON)", async () => {
    interface EchoArgs {
      text: string;
    }
    const args: EchoArgs = { text: "typed" };
    const optional = nativeTool("test.optional", async () => ({ json: "no arguments needed" }));
    const runtime = await open(space.dir, [echo, optional]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo", "test.optional"]), policy: { mode: "bypass" } });
    expect(await session.callTool("test.echo", args)).toMatchObject({ outcome: "succeeded", json: { text: "typed" } });
    expect(await session.callTool("test.optional")).toMatchObject({ outcome: "succeeded", json: "no arguments needed" });
  });

  it("N8 opening a runtime freezes the registry: a later registration fails", async () => {
    const registry = new ToolRegistry();
    registry.register(echo);
    const runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: path.join(space.dir, "j.db") },
      hostEntry: writeHostEntry(space.dir),
    });
    runtimes.push(runtime);
    expect(() => registry.register(nativeTool("test.late", async () => ({ json: null })))).toThrow(/frozen/i);
  });

  it("A3 the journal option passes durability on: governed calls of concurrent sessions are committed under strict durability", async () => {
    const bundle = writeBundle(space.dir, ["test.echo"]);
    const runtime = await open(space.dir, [echo], { journal: { path: path.join(space.dir, "strict.db"), durability: "strict" } });
    expect(runtime.journal.durability).toBe("strict");
    const sessions = await Promise.all(Array.from({ length: 4 }, () => runtime.openSession({ bundle, policy: { mode: "bypass" } })));
    await Promise.all(
      sessions.map(async (session) => {
        for (let index = 0; index < 20; index += 1) await session.callTool("test.echo", { text: `n${index}` });
      }),
    );
    await runtime.journal.flush();
    for (const session of sessions) {
      expect(runtime.journal.calls(session.id).filter((call) => call.outcome === "succeeded")).toHaveLength(20);
    }
    expect(runtime.journal.verify()).toMatchObject({ ok: true });
  });

  it("A2 the identity pins native descriptors and host bytes; approvals do not carry across identities", async () => {
    const bundle = writeBundle(space.dir, ["test.effect"]);
    const approvals: string[] = [];
    const approver = (request: { sessionId: string }) => (approvals.push(request.sessionId), { approved: true, scope: "session" as const, who: "ana" });
    const script = () =>
      new ScriptedProvider([
        { toolCalls: [{ name: "test__effect", arguments: "{}" }] },
        { text: "ok" },
        { toolCalls: [{ name: "test__effect", arguments: "{}" }] },
        { text: "ok" },
      ]);
    const journal = { path: path.join(space.dir, "shared.db") };

    const v1 = nativeTool("test.effect", async () => ({ json: "v1" }), { version: "1.0.0" });
    const first = await open(space.dir, [v1], { models: [script()], approver, journal });
    const session = await first.openSession({ bundle });
    await session.runTurn("one");
    await session.runTurn("two"); // remembered: no second question
    expect(approvals).toHaveLength(1);
    await first.close();

    // Same descriptor and host: same identity, the remembered approval applies.
    const again = await open(space.dir, [nativeTool("test.effect", async () => ({ json: "v1" }), { version: "1.0.0" })], {
      models: [script()],
      approver,
      journal,
    });
    const same = await again.openSession({ bundle });
    expect(same.executionIdentity).toBe(session.executionIdentity);
    await same.runTurn("three");
    expect(approvals).toHaveLength(1);
    await again.close();

    // A new implementation version: a new identity, asked again.
    const upgraded = await open(space.dir, [nativeTool("test.effect", async () => ({ json: "v2" }), { version: "2.0.0" })], {
      models: [script()],
      approver,
      journal,
    });
    const changed = await upgraded.openSession({ bundle });
    expect(changed.executionIdentity).not.toBe(session.executionIdentity);
    await changed.runTurn("four");
    expect(approvals).toHaveLength(2);
    await upgraded.close();

    // Different host bytes: a new identity too.
    writeFileSync(path.join(space.dir, "host2.js"), "// host v2\n");
    const rebuilt = await open(space.dir, [nativeTool("test.effect", async () => ({ json: "v1" }), { version: "1.0.0" })], {
      journal,
      hostEntry: path.join(space.dir, "host2.js"),
    });
    expect((await rebuilt.openSession({ bundle })).executionIdentity).not.toBe(session.executionIdentity);
  });

  it("N7 B2 a bundle selecting an unregistered tool fails at session open and names it", async () => {
    const runtime = await open(space.dir, [echo]);
    const attempt = runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo", "test.missing"]) });
    await expect(attempt).rejects.toSatisfy((error: unknown) => OpenWorkerError.isInstance(error) && /test\.missing/.test(error.message));
    // The same code and hint as `tools check` (the bundle resolver's): what the namespace has.
    await expect(attempt).rejects.toMatchObject({ code: "TOOL_NOT_REGISTERED", message: expect.stringContaining('namespace "test" has: test.echo') });
    // The field is where the name stands in tools.json, as `tools check` names it.
    await expect(attempt).rejects.toMatchObject({ details: { field: "tools[1]" }, message: expect.stringContaining('field "tools[1]"') });
    const elsewhere = runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo", "nowhere.tool"], "other") });
    await expect(elsewhere).rejects.toMatchObject({
      code: "NAMESPACE_UNKNOWN",
      details: { field: "tools[1]" },
      message: expect.stringContaining("registered namespaces: test"),
    });
    const legacy = runtime.openSession({ bundle: writeBundle(space.dir, '{"version":2,"mcpServers":{"nowhere":["tool"]}}', "legacy") });
    await expect(legacy).rejects.toMatchObject({ code: "NAMESPACE_UNKNOWN", details: { field: "mcpServers.nowhere" } });
  });
  it("T4 images are held for delivery only: consent is rechecked, a refusal withholds the image and tells the model, the journal keeps a digest", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const camera = nativeTool("test.camera", async () => ({
      json: { captured: 2 },
      images: [
        { mimeType: "image/png", data: png, description: "window", recheckConsent: () => true },
        { mimeType: "image/png", data: png, description: "desktop", recheckConsent: () => false },
      ],
    }));
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__camera", arguments: "{}" }] }, { text: "seen" }, { text: "later" }]);
    const runtime = await open(space.dir, [camera], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.camera"]), policy: { mode: "bypass" } });
    const turn = await session.runTurn("look");
    const toolMessage = model.requests[1]!.messages.find((message) => message.role === "tool");
    expect(toolMessage).toMatchObject({ role: "tool", images: [{ mimeType: "image/png", description: "window" }] });
    expect(toolMessage && "content" in toolMessage ? toolMessage.content : "").toContain("[image withheld");
    // Delivered once: the history keeps no bytes.
    expect(session.messages.filter((message) => message.role === "tool").every((message) => message.role === "tool" && message.images.length === 0)).toBe(true);
    await runtime.journal.flush();
    const exported = [...runtime.journal.exportSession(session.id)].join("\n");
    const finished = runtime.journal.timeline({ sessionId: session.id, callId: turn.calls[0]!.callId }).at(-1)!;
    expect(finished).toMatchObject({ imageDigests: [expect.stringMatching(/^sha256:[0-9a-f]{64}$/), expect.any(String)] });
    expect(exported).not.toContain(Buffer.from(png).toString("base64"));
  });

  it("T4 a model that reuses one tool-call id across attempts and turns gets each image once", async () => {
    let produced = 0;
    let checks = 0;
    const camera = nativeTool("test.camera", async () => ({
      json: { shot: ++produced },
      images: [
        { mimeType: "image/png", data: new Uint8Array([0x89, 0x50, produced]), description: `shot ${produced}`, recheckConsent: () => (checks++, true) },
      ],
    }));
    // Ids as some servers send them: `call_0` in every answer.
    const requests: ModelRequest[] = [];
    let answers = 0;
    const model: ModelProvider = {
      id: "reuse",
      defaultModel: "reuse-1",
      complete: async (request) => {
        requests.push({ ...request, messages: request.messages.map((message) => ({ ...message })) });
        answers += 1;
        return answers % 3 === 0 ? { text: "done", toolCalls: [] } : { text: "", toolCalls: [{ id: "call_0", name: "test__camera", arguments: {} }] };
      },
      listModels: () => [{ provider: "reuse", model: "reuse-1" }],
      readModelReadiness: () => undefined,
    };
    const runtime = await open(space.dir, [camera], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.camera"]), policy: { mode: "bypass" } });
    for (let turn = 0; turn < 4; turn += 1) expect((await session.runTurn("again")).completed).toBe(true);
    expect(produced).toBe(8);
    expect(checks).toBe(8); // one consent check per image, never again for an older one
    const delivered = requests.map((request) =>
      request.messages.flatMap((message) => (message.role === "tool" ? message.images.map((image) => image.description) : [])),
    );
    // Each request after a call carries that call's image only.
    expect(delivered.filter((images) => images.length > 0)).toEqual(Array.from({ length: 8 }, (_, index) => [`shot ${index + 1}`]));
  });

  it("ScriptedProvider with recordRequests: false answers as scripted and keeps no request", async () => {
    const kept = new ScriptedProvider([{ text: "one" }], { recordRequests: false });
    const runtime = await open(space.dir, [echo], { models: [kept] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: { mode: "bypass" } });
    expect(await session.runTurn("hi")).toMatchObject({ completed: true, text: "one" });
    expect(kept.requests).toEqual([]);
  });

  it("a host that starts the next turn from the turn_finished event is not refused TURN_IN_PROGRESS", async () => {
    const model = new ScriptedProvider([{ text: "first" }, { text: "second" }]);
    const runtime = await open(space.dir, [echo], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: { mode: "bypass" } });
    let next: Promise<unknown> | undefined;
    const unsubscribe = session.subscribe((event) => {
      if (event.type === "turn_finished" && next === undefined) next = session.runTurn("again");
    });
    expect(await session.runTurn("hi")).toMatchObject({ completed: true, text: "first" });
    expect(await next).toMatchObject({ completed: true, text: "second" });
    unsubscribe();
  });

  it('a ScriptedProvider with whenExhausted: "fail" fails the attempt past its last step: the turn ends model_error, not answered', async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__echo", arguments: { text: "x" } }] }], { whenExhausted: "fail" });
    const runtime = await open(space.dir, [echo], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: { mode: "bypass" } });
    const turn = await session.runTurn("go");
    expect(turn).toMatchObject({ completed: false, reason: "model_error", error: { message: expect.stringContaining("the script has no step left") } });
    expect(model.remaining).toBe(0);
    // The default answers, for demos whose loop goes on.
    const lenient = new ScriptedProvider([]);
    expect(lenient.remaining).toBe(0);
    await expect(lenient.complete({ signal: new AbortController().signal } as never)).resolves.toMatchObject({ text: "(script finished)" });
    expect(() => new ScriptedProvider([], { whenExhausted: "never" as never })).toThrow(/whenExhausted/);
  });

  it("many sessions run concurrently and hooks see their own session id", async () => {
    const seen = new Map<string, string[]>();
    const tool = nativeTool("test.who", async (context) => ({ json: context.sessionId }), {
      revoke: (sessionId) => void seen.set(sessionId, [...(seen.get(sessionId) ?? []), "revoke"]),
    });
    const runtime = await open(space.dir, [tool]);
    const bundle = writeBundle(space.dir, ["test.who"]);
    const sessions = await Promise.all(Array.from({ length: 20 }, () => runtime.openSession({ bundle, policy: { mode: "bypass" } })));
    const results = await Promise.all(sessions.map((session) => session.callTool("test.who", {})));
    results.forEach((result, index) => expect(result.json).toBe(sessions[index]!.id));
    await Promise.all(sessions.map((session) => session.close()));
    // Each session's tool was revoked as its host call ended (T5), then again at close.
    for (const session of sessions) expect(seen.get(session.id)).toEqual(["revoke", "revoke"]);
  });

  it("A3 E4 closing a session mid-call cancels it, journals its terminal record, then the close; nothing is replayed", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__hang", arguments: "{}" }] }]);
    const runtime = await open(space.dir, [nativeTool("test.hang", () => new Promise(() => undefined))], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.hang"]), policy: { mode: "bypass" } });
    const started = new Promise<void>((resolve) => session.subscribe((event) => event.type === "call_started" && resolve()));
    const turn = session.runTurn("go");
    const direct = started.then(() => session.callTool("test.hang", {}));
    await started;
    await session.close();
    expect(await turn).toMatchObject({ completed: false, reason: "cancelled" });
    expect(await direct).toMatchObject({ outcome: "cancelled", stopsTurn: true });
    await expect(session.callTool("test.hang", {})).rejects.toThrow(/closed/);
    const calls = runtime.journal.calls(session.id);
    expect(calls.map((call) => call.outcome)).toEqual(["cancelled", "cancelled"]);
    expect(runtime.journal.session(session.id)).toMatchObject({ openCalls: 0, closedAt: expect.any(String) });
    expect(runtime.journal.verify(session.id)).toMatchObject({ ok: true });
  });

  it("M2 prepare() resolves the selection before any turn; host calls use it", async () => {
    const runtime = await open(space.dir, [echo, nativeTool("test.other", async () => ({ json: null }))]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]), policy: { mode: "bypass" } });
    const selection = await session.prepare();
    expect(selection.tools.map((tool) => tool.alias)).toEqual(["test__echo"]);
    expect(session.selection).toBe(selection);
    expect(await session.callTool("test.echo", { text: "x" })).toMatchObject({ outcome: "succeeded" });
  });

  it("A1 an approver may say its answer came from automation: journaled as a policy decision, not a person", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__echo", arguments: '{"text":"x"}' }] }, { text: "ok" }]);
    const runtime = await open(space.dir, [echo], { models: [model], approver: () => ({ approved: true, decidedBy: "policy", who: "ci flag" }) });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]) });
    const turn = await session.runTurn("go");
    const decided = runtime.journal.timeline({ sessionId: session.id, callId: turn.calls[0]!.callId }).find((record) => record.kind === "approval_decided");
    expect(decided).toMatchObject({ decision: "approved", by: "policy", who: "ci flag" });
  });

  it('A1 A3 an approver answer that is not an object (a forgotten return, true, "yes") is a fail-closed denial journaled as the runtime\'s rule, not a person', async () => {
    for (const [index, answer] of [undefined, true, "yes"].entries()) {
      // What a host's approver returns when its author forgot `return`, or answered a yes/no question.
      const approver = (async () => answer) as unknown as Approver;
      const runtime = await open(space.dir, [echo], { approver, journal: { path: path.join(space.dir, `shape-${index}.db`) } });
      const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]) });
      const report = await session.callTool("test.echo", { text: "x" });
      expect(report).toMatchObject({ outcome: "denied", code: "APPROVAL_DENIED" });
      expect(report.approval).toMatchObject({
        approved: false,
        by: "policy",
        who: "runtime (fail closed)",
        reason: expect.stringContaining("did not answer with an object"),
      });
      const decided = runtime.journal.timeline({ sessionId: session.id, callId: report.callId }).find((record) => record.kind === "approval_decided");
      expect(decided).toMatchObject({ decision: "denied", by: "policy", who: "runtime (fail closed)" });
    }
  });

  it("I1 the model catalog lists configured models without readiness; readiness is a separate synchronous observation", async () => {
    const runtime = await open(space.dir, [echo], { models: [new ScriptedProvider([])] });
    // Seed 004: rows never carry readiness; it is asked for at the moment of use.
    expect(runtime.loadModelCatalog()).toEqual([{ provider: "scripted", model: "scripted-1", nativeRuntime: "openworker" }]);
    const readiness = runtime.readModelCatalogReadiness({ provider: "scripted", model: "scripted-1" });
    expect(readiness).toEqual({ accountType: "scripted" });
    expect(readiness).not.toBeInstanceOf(Promise);
    expect(runtime.readModelCatalogReadiness({ provider: "scripted", model: "other" })).toBeUndefined();
    expect(runtime.readModelCatalogReadiness({ provider: "nobody", model: "scripted-1" })).toBeUndefined();
    // Closed, its observations are disposed: the rows stay, readiness is undefined.
    await runtime.close();
    expect(runtime.loadModelCatalog()).toHaveLength(1);
    expect(runtime.readModelCatalogReadiness({ provider: "scripted", model: "scripted-1" })).toBeUndefined();
  });
  it("N4 an alias longer than the model provider accepts fails turn preparation with a clear error", async () => {
    const name = `test.${"a".repeat(70)}`;
    const model = new ScriptedProvider([{ text: "never" }], { maxToolNameLength: 64 });
    const runtime = await open(space.dir, [nativeTool(name, async () => ({ json: null }))], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, [name]) });
    const turn = await session.runTurn("hi");
    expect(turn).toMatchObject({ reason: "preparation_failed", error: { code: "ALIAS_TOO_LONG_FOR_PROVIDER" } });
    expect(turn.error?.message).toContain("64");
    expect(model.requests).toHaveLength(0);
  });
});
