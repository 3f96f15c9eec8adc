import { inspect } from "node:util";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { chatCompletion, startFakeOpenAI } from "@openworker/model-openai/testing";
import { MODEL_PROVIDER_CODES, type ModelRequest, type ModelToolDefinition } from "@openworker/runtime";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { fromAiSdk } from "../src/index.js";
import { anthropicError, anthropicStream, startFakeAnthropic, type AnthropicRequest } from "./support/fake-anthropic.js";
import { responsesStream, startFakeResponses } from "./support/fake-openai-responses.js";
import { PNG } from "./support/harness.js";
import { sendEvents, type Answer } from "./support/vendor-server.js";

const API_KEY = "sk-ant-canary-fedcba9876543210";
const SEARCH: ModelToolDefinition = {
  name: "example__web_search",
  description: "Search the web.",
  inputSchema: { type: "object", properties: { query: { type: "string" } } },
};

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function anthropicServer(script: Parameters<typeof startFakeAnthropic>[0]) {
  const server = await startFakeAnthropic(script);
  servers.push(server);
  return { server, anthropic: createAnthropic({ baseURL: server.baseURL, apiKey: API_KEY }) };
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "",
    instructions: "Be brief.",
    facts: {},
    messages: [{ role: "user", content: "hello" }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<OpenWorkerError> {
  try {
    await promise;
  } catch (error) {
    if (OpenWorkerError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

describe("fromAiSdk: one attempt", () => {
  it("N2 L1 streams the answer: text joined from its deltas, tool calls with the JSON the model wrote, usage counted", async () => {
    const { server, anthropic } = await anthropicServer([
      anthropicStream({ text: "Searching now.", toolUses: [{ id: "toolu_01", name: "example__web_search", input: { query: "weather" } }] }),
    ]);
    const provider = fromAiSdk(anthropic("claude-haiku-4-5"), { secrets: [API_KEY] });
    const response = await provider.complete(request({ tools: [SEARCH], facts: { example__web_search: { quotaLeft: 3 } } }));
    expect(response).toEqual({
      text: "Searching now.",
      toolCalls: [{ id: "toolu_01", name: "example__web_search", arguments: '{"query":"weather"}' }],
      usage: { inputTokens: 472, outputTokens: 89 },
    });
    expect(server.requests[0]?.system).toEqual([{ type: "text", text: expect.stringContaining('\n{"example__web_search":{"quotaLeft":3}}') }]);
  });

  it("N4 an alias longer than maxToolNameLength is refused before anything is sent, naming alias, bytes and limit", async () => {
    const { server, anthropic } = await anthropicServer([]);
    const provider = fromAiSdk(anthropic("claude-haiku-4-5"), { maxToolNameLength: 16 });
    expect(provider.maxToolNameLength).toBe(16);
    const error = await rejection(provider.complete(request({ tools: [SEARCH] })));
    expect(error.code).toBe(MODEL_PROVIDER_CODES.ALIAS_TOO_LONG);
    expect(error.message).toContain('tool alias "example__web_search" is 19 bytes');
    expect(error.message).toContain("at most 16");
    expect(server.requests).toHaveLength(0);
    expect(fromAiSdk(anthropic("claude-haiku-4-5")).maxToolNameLength).toBe(64);
  });

  it("E4 an answer cut at the output-token limit is refused whole: no tool call of it runs", async () => {
    const { anthropic } = await anthropicServer([
      anthropicStream({ toolUses: [{ id: "toolu_01", name: "example__web_search", input: { query: "w" } }], stopReason: "max_tokens" }),
    ]);
    const error = await rejection(fromAiSdk(anthropic("claude-haiku-4-5")).complete(request({ tools: [SEARCH] })));
    expect(error.code).toBe(MODEL_PROVIDER_CODES.REQUEST_FAILED);
    expect(error.details).toMatchObject({ reason: "truncated" });
    expect(error.message).toContain("raise maxOutputTokens");
  });

  it("E4 an incomplete Responses answer (max_output_tokens) is refused the same way", async () => {
    const server = await startFakeResponses([responsesStream({ text: "Half an ans", incomplete: "max_output_tokens" })]);
    servers.push(server);
    const openai = createOpenAI({ baseURL: server.baseURL, apiKey: API_KEY });
    const error = await rejection(fromAiSdk(openai.responses("gpt-5-mini")).complete(request()));
    expect(error.details).toMatchObject({ reason: "truncated" });
  });

  it("E4 a cancelled attempt rejects MODEL_REQUEST_CANCELLED and drops the open stream", async () => {
    let closed: Promise<void> | undefined;
    const hang: Answer<AnthropicRequest> = (res) => {
      closed = new Promise((resolve) => res.once("close", () => resolve()));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: ping\ndata: {"type":"ping"}\n\n');
    };
    const { anthropic } = await anthropicServer([hang]);
    const controller = new AbortController();
    const pending = fromAiSdk(anthropic("claude-haiku-4-5")).complete(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("user cancelled")), 100);
    expect((await rejection(pending)).code).toBe(MODEL_PROVIDER_CODES.REQUEST_CANCELLED);
    await closed;
  });

  it("E4 an answer that does not finish within timeoutMs fails with the deadline, not a hang", async () => {
    const hang: Answer<AnthropicRequest> = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: ping\ndata: {"type":"ping"}\n\n');
    };
    const { anthropic } = await anthropicServer([hang]);
    const error = await rejection(fromAiSdk(anthropic("claude-haiku-4-5"), { timeoutMs: 200 }).complete(request()));
    expect(error.code).toBe(MODEL_PROVIDER_CODES.REQUEST_FAILED);
    expect(error.details).toMatchObject({ reason: "timeout", timeoutMs: 200 });
  });

  it("T4 images: in the tool result, in a user message after the results, or withheld from a text-only model (which is told)", async () => {
    const toolAnswer: ModelRequest["messages"] = [
      { role: "user", content: "look" },
      { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "test__camera", arguments: "{}" }] },
      { role: "tool", toolCallId: "call_1", name: "test__camera", content: '{"captured":1}', isError: false, images: [{ mimeType: "image/png", data: PNG }] },
    ];
    const endpoint = await startFakeOpenAI([() => chatCompletion({ content: "seen" }), () => chatCompletion({ content: "not seen" })]);
    servers.push(endpoint);
    const local = createOpenAICompatible({ name: "local", baseURL: endpoint.baseURL });
    await fromAiSdk(local("llava")).complete(request({ messages: toolAnswer }));
    await fromAiSdk(local("qwen3"), { images: false }).complete(request({ messages: toolAnswer }));
    const base64 = Buffer.from(PNG).toString("base64");
    expect(endpoint.requests[0]?.messages.at(-1)).toMatchObject({
      role: "user",
      content: [{ type: "text" }, { type: "image_url", image_url: { url: `data:image/png;base64,${base64}` } }],
    });
    const textOnly = endpoint.requests[1]?.messages ?? [];
    expect(textOnly.at(-1)).toMatchObject({
      role: "tool",
      content: expect.stringContaining("[1 image returned by this call not shown: this model takes text only]"),
    });
    expect(JSON.stringify(textOnly)).not.toContain(base64);
  });

  it("L2 the history after the system prompt: consecutive user messages go as one (a turn the model never answered leaves its message)", async () => {
    const { server, anthropic } = await anthropicServer([anthropicStream({ text: "both" })]);
    await fromAiSdk(anthropic("claude-haiku-4-5")).complete(
      request({
        messages: [
          { role: "user", content: "first" },
          { role: "user", content: "second" },
        ],
      }),
    );
    expect(server.requests[0]?.messages).toEqual([{ role: "user", content: [{ type: "text", text: "first\n\nsecond" }] }]);
  });
});

describe("fromAiSdk: credentials (E6) and readiness (I1)", () => {
  it("E6 a 401 whose body echoes the key: the error names status and vendor code, never the key, and keeps no cause that holds it", async () => {
    const { anthropic } = await anthropicServer([anthropicError(401, "authentication_error", `invalid x-api-key ${API_KEY}`)]);
    const provider = fromAiSdk(anthropic("claude-haiku-4-5"), { secrets: [API_KEY] });
    const error = await rejection(provider.complete(request()));
    expect(error.code).toBe(MODEL_PROVIDER_CODES.REQUEST_FAILED);
    expect(error.message).toMatch(
      /model provider "anthropic" \(model "claude-haiku-4-5"\) at http:\/\/127\.0\.0\.1:\d+ answered HTTP 401 \(authentication_error\): invalid x-api-key \[redacted\]; check the API key/,
    );
    expect(error.details).toMatchObject({ reason: "http", status: 401, serverCode: "authentication_error" });
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(API_KEY);
    expect(error.cause).toBeUndefined();
  });

  it("E6 an error event inside the stream that repeats the key is redacted too", async () => {
    const failing: Answer<AnthropicRequest> = (res) =>
      sendEvents(res, [
        {
          event: "message_start",
          data: {
            type: "message_start",
            message: {
              id: "msg_1",
              type: "message",
              role: "assistant",
              model: "m",
              content: [],
              stop_reason: null,
              stop_sequence: null,
              usage: { input_tokens: 1, output_tokens: 1 },
            },
          },
        },
        { event: "error", data: { type: "error", error: { type: "overloaded_error", message: `Overloaded for key ${API_KEY}` } } },
      ]);
    const { anthropic } = await anthropicServer([failing]);
    const error = await rejection(fromAiSdk(anthropic("claude-haiku-4-5"), { secrets: [API_KEY] }).complete(request()));
    expect(error.code).toBe(MODEL_PROVIDER_CODES.REQUEST_FAILED);
    expect(error.message).toContain("overloaded_error");
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(API_KEY);
  });

  it("I1 readiness is synchronous and fixed at construction; a 401 makes it undefined until a request succeeds", async () => {
    const { anthropic } = await anthropicServer([anthropicError(401, "authentication_error", "invalid x-api-key"), anthropicStream({ text: "ok" })]);
    const provider = fromAiSdk(anthropic, { model: "claude-haiku-4-5", models: ["claude-opus-4-1"], secrets: [API_KEY] });
    expect(provider.listModels()).toEqual([
      { provider: "anthropic", model: "claude-haiku-4-5" },
      { provider: "anthropic", model: "claude-opus-4-1" },
    ]);
    expect(provider.readModelReadiness("claude-opus-4-1")).toEqual({ accountType: "api-key" });
    expect(provider.readModelReadiness("claude-unknown")).toBeUndefined();
    await rejection(provider.complete(request()));
    expect(provider.readModelReadiness("claude-haiku-4-5")).toBeUndefined();
    await provider.complete(request());
    expect(provider.readModelReadiness("claude-haiku-4-5")).toEqual({ accountType: "api-key" });
    expect(fromAiSdk(anthropic("claude-haiku-4-5")).readModelReadiness("claude-haiku-4-5")).toBeUndefined();
    expect(provider.secrets()).toEqual([API_KEY]);
  });

  it("I1 a session may pick any model of the catalog; a model outside it is refused before anything is sent", async () => {
    const { server, anthropic } = await anthropicServer([anthropicStream({ text: "from opus" })]);
    const provider = fromAiSdk(anthropic, { model: "claude-haiku-4-5", models: ["claude-opus-4-1"] });
    await provider.complete(request({ model: "claude-opus-4-1" }));
    expect(server.requests[0]?.model).toBe("claude-opus-4-1");
    const error = await rejection(provider.complete(request({ model: "gpt-5" })));
    expect(error.details).toMatchObject({ reason: "unknown-model", models: ["claude-haiku-4-5", "claude-opus-4-1"] });
    expect(server.requests).toHaveLength(1);
  });
});

describe("fromAiSdk: options", () => {
  it("N4 I1 refuses what is not a v4 language model, a factory without a model, and bad numbers, with MODEL_PROVIDER_CONFIG_INVALID", () => {
    const v3 = { specificationVersion: "v3", provider: "old.chat", modelId: "m", doStream: () => undefined, doGenerate: () => undefined };
    const attempts = [
      () => fromAiSdk(v3 as never),
      () => fromAiSdk({} as never),
      () => fromAiSdk((() => v3) as never),
      () => fromAiSdk(createAnthropic({ apiKey: "k" }), {}),
      () => fromAiSdk(createAnthropic({ apiKey: "k" })("claude-haiku-4-5"), { timeoutMs: 0 }),
      () => fromAiSdk(createAnthropic({ apiKey: "k" })("claude-haiku-4-5"), { models: ["claude-opus-4-1"] }),
      () => fromAiSdk(createAnthropic({ apiKey: "k" })("claude-haiku-4-5"), { images: "inline" as never }),
    ];
    for (const attempt of attempts) {
      expect(attempt).toThrow(expect.objectContaining({ code: MODEL_PROVIDER_CODES.CONFIG_INVALID }));
    }
    expect(attempts[0]).toThrow(/specification "v3"; fromAiSdk drives "v4" models/);
  });

  it("I1 catalog rows name the vendor part of the model's provider, unless told another id", () => {
    const openai = createOpenAI({ apiKey: "k" });
    expect(fromAiSdk(openai.responses("gpt-5-mini")).id).toBe("openai");
    expect(fromAiSdk(openai.responses("gpt-5-mini"), { id: "openai-eu" }).listModels()).toEqual([{ provider: "openai-eu", model: "gpt-5-mini" }]);
    expect(fromAiSdk(createAnthropic({ apiKey: "k" })("claude-haiku-4-5")).defaultModel).toBe("claude-haiku-4-5");
  });
});
