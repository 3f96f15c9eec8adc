import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { chatCompletion, startFakeOpenAI, type FakeOpenAIServer } from "@openworker/model-openai/testing";
import type { Runtime, RuntimeEvent, Session } from "@openworker/runtime";
import { describe, expect, it } from "vitest";
import { fromAiSdk } from "../src/index.js";
import { anthropicStream, startFakeAnthropic } from "./support/fake-anthropic.js";
import { responsesStream, startFakeResponses } from "./support/fake-openai-responses.js";
import { FACT, openRuntime, PNG_BASE64, scratchEach, TURN_SELECTION, turnTools, writeBundle } from "./support/harness.js";

// Full turns through the adapter, one per vendor package, each against a local server
// speaking that vendor's wire format (streaming): the model calls three tools in one
// answer (one answers, one returns an image whose consent is rechecked before delivery,
// one fails with a ToolError), then answers. Each turn is journaled and verified.

const API_KEY = "sk-ant-canary-0123456789abcdef";
const CALLS = [
  { id: "call_echo", name: "test__echo", input: { text: "over the wire" } },
  { id: "call_camera", name: "test__camera", input: {} },
  { id: "call_refuses", name: "test__refuses", input: {} },
];

let runtime: Runtime | undefined;
let server: { close(): Promise<void> } | undefined;
const space = scratchEach(async () => {
  await runtime?.close();
  await server?.close();
  runtime = undefined;
  server = undefined;
});

/** Runs the turn and checks what every vendor must show: the calls' outcomes, the journal, the events. */
async function fullTurn(models: Parameters<typeof openRuntime>[2]["models"], log: string[]): Promise<{ session: Session; events: RuntimeEvent[] }> {
  runtime = await openRuntime(space.dir, turnTools(log), { models });
  const session = await runtime.openSession({ bundle: writeBundle(space.dir, TURN_SELECTION) });
  const events: RuntimeEvent[] = [];
  session.subscribe((event) => events.push(event));
  const turn = await session.runTurn("check the device");

  expect(turn).toMatchObject({ completed: true, reason: "answered", text: "All three answered." });
  expect(turn.calls.map((call) => [call.qualifiedName, call.outcome])).toEqual([
    ["test.echo", "succeeded"],
    ["test.camera", "succeeded"],
    ["test.refuses", "failed"],
  ]);
  expect(log).toEqual(["consent rechecked"]);
  expect(events.filter((event) => event.type === "message")).toMatchObject([{ text: "Let me check." }, { text: "All three answered." }]);
  await runtime.journal.flush();
  expect(runtime.journal.verify(session.id)).toMatchObject({ ok: true });
  const journal = [...runtime.journal.exportSession(session.id)].join("\n");
  // T4: a digest of the image, never its bytes; L2: facts never journaled; E6: no key.
  expect(journal).not.toContain(PNG_BASE64);
  expect(journal).not.toContain(FACT);
  expect(journal).not.toContain(API_KEY);
  expect(JSON.stringify(session.messages)).not.toContain(FACT);
  return { session, events };
}

describe("a full turn through @ai-sdk/anthropic (Messages API, streamed)", () => {
  it("A3 L1 L2 T4 N2 tools by alias, facts in the system prompt, tool results with the image and the tool error, journal verified", async () => {
    const anthropic = await startFakeAnthropic([anthropicStream({ text: "Let me check.", toolUses: CALLS }), anthropicStream({ text: "All three answered." })]);
    server = anthropic;
    const provider = createAnthropic({ baseURL: anthropic.baseURL, apiKey: API_KEY });
    const log: string[] = [];
    await fullTurn([fromAiSdk(provider("claude-sonnet-4-5"), { secrets: [API_KEY] })], log);

    const [first, second] = anthropic.requests;
    expect(anthropic.headers[0]?.["x-api-key"]).toBe(API_KEY);
    expect(first).toMatchObject({ model: "claude-sonnet-4-5", stream: true });
    expect(first?.tools?.map((tool) => tool.name)).toEqual(["test__echo", "test__camera", "test__refuses", "test__status"]);
    expect(JSON.stringify(first?.system)).toContain(FACT);
    expect(JSON.stringify(second?.system)).toContain(FACT);
    const results = second?.messages.at(-1);
    expect(results?.role).toBe("user");
    expect(results?.content).toMatchObject([
      { type: "tool_result", tool_use_id: "call_echo", content: '{"echoed":"over the wire"}' },
      {
        type: "tool_result",
        tool_use_id: "call_camera",
        content: [
          { type: "text" },
          { type: "text", text: "image: the settings window" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
        ],
      },
      { type: "tool_result", tool_use_id: "call_refuses", is_error: true },
    ]);
    expect(JSON.stringify(results)).toContain("the device is locked");
    expect(JSON.stringify(second?.messages.slice(0, -1))).not.toContain(FACT);
  });
});

describe("a full turn through @ai-sdk/openai (Responses API, streamed)", () => {
  it("A3 L1 L2 T4 N2 function calls by alias, facts in the instructions, outputs with the image and the tool error, journal verified", async () => {
    const responses = await startFakeResponses([
      responsesStream({ text: "Let me check.", functionCalls: CALLS.map((call) => ({ callId: call.id, name: call.name, arguments: call.input })) }),
      responsesStream({ text: "All three answered." }),
    ]);
    server = responses;
    const openai = createOpenAI({ baseURL: responses.baseURL, apiKey: API_KEY });
    const log: string[] = [];
    await fullTurn([fromAiSdk((id) => openai.responses(id), { model: "gpt-5-mini", secrets: [API_KEY] })], log);

    const [first, second] = responses.requests;
    expect(responses.headers[0]?.authorization).toBe(`Bearer ${API_KEY}`);
    expect(first).toMatchObject({ model: "gpt-5-mini", stream: true });
    expect(first?.tools?.map((tool) => tool.name)).toEqual(["test__echo", "test__camera", "test__refuses", "test__status"]);
    expect(JSON.stringify(first?.input[0])).toContain(FACT);
    const outputs = second?.input.filter((item) => item.type === "function_call_output");
    expect(outputs).toMatchObject([
      { call_id: "call_echo", output: '{"echoed":"over the wire"}' },
      {
        call_id: "call_camera",
        output: [{ type: "input_text" }, { type: "input_text" }, { type: "input_image", image_url: `data:image/png;base64,${PNG_BASE64}` }],
      },
      { call_id: "call_refuses" },
    ]);
    expect(JSON.stringify(outputs?.[2])).toContain("the device is locked");
    expect(JSON.stringify(second?.input.slice(1))).not.toContain(FACT);
  });
});

describe("a full turn through @ai-sdk/openai-compatible (chat completions, streamed) against the fake OpenAI-compatible endpoint", () => {
  it("A3 L1 L2 T4 N2 tool calls by alias, the image in a user message after the tool results, the tool error, journal verified", async () => {
    const endpoint: FakeOpenAIServer = await startFakeOpenAI([
      () => chatCompletion({ content: "Let me check.", toolCalls: CALLS.map((call) => ({ id: call.id, name: call.name, arguments: call.input })) }),
      () => chatCompletion({ content: "All three answered." }),
    ]);
    server = endpoint;
    const local = createOpenAICompatible({ name: "local", baseURL: endpoint.baseURL, apiKey: API_KEY, includeUsage: true });
    const log: string[] = [];
    await fullTurn([fromAiSdk(local("qwen3:8b"), { secrets: [API_KEY] })], log);

    const [first, second] = endpoint.requests;
    expect(first).toMatchObject({ model: "qwen3:8b", stream: true });
    expect(first?.tools?.map((tool) => tool.function.name)).toEqual(["test__echo", "test__camera", "test__refuses", "test__status"]);
    expect(String(first?.messages[0]?.content)).toContain(FACT);
    const after = second!.messages.slice(second!.messages.findIndex((message) => message.role === "tool"));
    expect(after).toMatchObject([
      { role: "tool", tool_call_id: "call_echo", content: '{"echoed":"over the wire"}' },
      { role: "tool", tool_call_id: "call_camera" },
      { role: "tool", tool_call_id: "call_refuses" },
      { role: "user", content: [{ type: "text" }, { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }] },
    ]);
    expect(JSON.stringify(after[2])).toContain("the device is locked");
    // T4: the image travels only as an image part, never as base64 inside a tool's text.
    expect(JSON.stringify(after.slice(0, 3))).not.toContain(PNG_BASE64);
  });
});
