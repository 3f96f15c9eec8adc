import { describe, expect, it } from "vitest";
import type { Runtime } from "@openworker/runtime";
import { OpenAICompatibleProvider } from "../src/index.js";
import { chatCompletion, errorReply, startFakeOpenAI, type FakeChatRequest, type FakeOpenAIServer } from "../src/testing/index.js";
import { echo, nativeTool, openRuntime, scratchEach, writeBundle } from "./support/harness.js";

let runtime: Runtime | undefined;
let endpoint: FakeOpenAIServer | undefined;
const space = scratchEach(async () => {
  await runtime?.close();
  await endpoint?.close();
  runtime = undefined;
  endpoint = undefined;
});

describe("a full turn through the OpenAI-compatible provider (real wire format, local endpoint)", () => {
  it("A3 L1 the model sees aliases and facts, calls a tool, gets the result, answers; the journal verifies", async () => {
    endpoint = await startFakeOpenAI([
      () => chatCompletion({ toolCalls: [{ id: "call_a", name: "test__echo", arguments: '{"text":"over the wire"}' }] }),
      (body) => {
        const last = body.messages.at(-1)!;
        return chatCompletion({ content: `The tool said: ${String(last.content)}` });
      },
    ]);
    const facts = nativeTool("test.status", async () => ({ json: null }), { modelContext: () => ({ mood: "ready" }) });
    const provider = new OpenAICompatibleProvider({ baseURL: endpoint.baseURL, model: "fake-model", apiKey: "sk-test-key-for-fake-endpoint" });
    runtime = await openRuntime(space.dir, [echo, facts], { models: [provider], approver: () => ({ approved: true, who: "tester" }) });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo", "test.status"]) });
    const turn = await session.runTurn("echo something");

    expect(turn).toMatchObject({ completed: true, reason: "answered", text: 'The tool said: {"text":"over the wire"}' });
    const first = endpoint.requests[0]!;
    expect(first.tools?.map((tool) => tool.function.name)).toEqual(["test__echo", "test__status"]);
    expect(String(first.messages[0]!.content)).toContain('"mood":"ready"');
    const second = endpoint.requests[1]!;
    expect(second.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_a" });
    await runtime.journal.flush();
    expect(runtime.journal.verify(session.id)).toMatchObject({ ok: true });
    expect(runtime.journal.calls(session.id)).toHaveLength(1);
    expect([...runtime.journal.exportSession(session.id)].join("\n")).not.toContain("sk-test-key");
  });

  it("a server that repeats one tool-call id in an answer: each call keeps its own id, so each result answers its own call", async () => {
    endpoint = await startFakeOpenAI([
      () =>
        chatCompletion({
          toolCalls: [
            { id: "call_0", name: "test__echo", arguments: '{"text":"first"}' },
            { id: "call_0", name: "test__echo", arguments: '{"text":"second"}' },
          ],
        }),
      () => chatCompletion({ content: "both done" }),
    ]);
    const provider = new OpenAICompatibleProvider({ baseURL: endpoint.baseURL, model: "fake-model", apiKey: "sk-test-key-for-fake-endpoint" });
    runtime = await openRuntime(space.dir, [echo], { models: [provider], approver: () => ({ approved: true }) });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]) });
    expect(await session.runTurn("echo twice")).toMatchObject({ completed: true, text: "both done" });
    const history = endpoint.requests[1]!.messages;
    const assistant = history.find((message) => message.role === "assistant") as { tool_calls: { id: string }[] };
    const sent = assistant.tool_calls.map((call) => call.id);
    expect(sent[0]).toBe("call_0");
    expect(new Set(sent).size).toBe(2);
    const answers = history.filter((message) => message.role === "tool") as { tool_call_id: string; content: string }[];
    expect(answers.map((answer) => [answer.tool_call_id, answer.content])).toEqual([
      [sent[0], '{"text":"first"}'],
      [sent[1], '{"text":"second"}'],
    ]);
  });

  it("a failing model endpoint stops the turn with MODEL_FAILED and no tool runs", async () => {
    endpoint = await startFakeOpenAI([() => errorReply(500, "overloaded")]);
    const provider = new OpenAICompatibleProvider({ baseURL: endpoint.baseURL, model: "fake-model", apiKey: "sk-test-key-for-fake-endpoint" });
    runtime = await openRuntime(space.dir, [echo], { models: [provider] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]) });
    const turn = await session.runTurn("hello");
    expect(turn).toMatchObject({ completed: false, reason: "model_error", error: { code: "MODEL_FAILED" } });
    expect(turn.error?.message).not.toContain("sk-test-key");
  });

  it("after a turn the model never answered, the next request still alternates roles (strict chat templates refuse two user messages in a row)", async () => {
    // What vLLM and llama.cpp answer with a Mistral-style template when roles do not alternate.
    const strict = (body: FakeChatRequest) => {
      const roles = body.messages.map((message) => message.role).filter((role) => role !== "system");
      const repeated = roles.some((role, index) => index > 0 && role === "user" && roles[index - 1] === "user");
      return repeated
        ? errorReply(400, "Conversation roles must alternate user/assistant/user/assistant/...", "BadRequestError")
        : chatCompletion({ content: "answered both" });
    };
    endpoint = await startFakeOpenAI([() => errorReply(500, "overloaded"), strict]);
    const provider = new OpenAICompatibleProvider({ baseURL: endpoint.baseURL, model: "fake-model", apiKey: "sk-test-key-for-fake-endpoint" });
    runtime = await openRuntime(space.dir, [echo], { models: [provider] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]) });
    expect(await session.runTurn("first question")).toMatchObject({ completed: false, reason: "model_error" });
    expect(await session.runTurn("second question")).toMatchObject({ completed: true, text: "answered both" });
    // The unanswered message is not lost: both reach the model, in order, as one user message.
    const sent = endpoint.requests[1]!.messages.filter((message) => message.role !== "system");
    expect(sent).toEqual([{ role: "user", content: "first question\n\nsecond question" }]);
  });
});
