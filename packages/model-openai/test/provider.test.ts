import { inspect } from "node:util";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { LIVE_FACTS_HEADING, systemPrompt } from "@openworker/runtime";
import { OpenAICompatibleProvider, type OpenAICompatibleOptions } from "../src/index.js";
import type { ModelMessage, ModelRequest, ModelToolDefinition } from "@openworker/runtime";
import { chatCompletion, errorReply, startFakeOpenAI, type FakeOpenAIServer, type FakeScriptStep } from "../src/testing/index.js";
import { rejection } from "./support/rejection.js";

const API_KEY = "sk-test-0123456789abcdef-SECRET";

const WEB_SEARCH: ModelToolDefinition = {
  name: "example__web_search",
  description: "Search the web.",
  inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
};

const servers: FakeOpenAIServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(script: FakeScriptStep[]): Promise<FakeOpenAIServer> {
  const server = await startFakeOpenAI(script);
  servers.push(server);
  return server;
}

function provider(server: FakeOpenAIServer, options: Partial<OpenAICompatibleOptions> = {}): OpenAICompatibleProvider {
  return new OpenAICompatibleProvider({ baseURL: server.baseURL, model: "fake-model", apiKey: API_KEY, ...options });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "fake-model",
    instructions: "You are a careful coworker.",
    facts: {},
    messages: [{ role: "user", content: "hello" }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** Runs `body` with environment variables set, restoring them afterwards. */
async function withEnv<T>(values: Record<string, string | undefined>, body: () => T | Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(values).map((key) => [key, process.env[key]]));
  const apply = (entries: Record<string, string | undefined>): void => {
    for (const [key, value] of Object.entries(entries)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  apply(values);
  try {
    return await body();
  } finally {
    apply(saved);
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe("OpenAICompatibleProvider.complete", () => {
  it("L1 L2 N2 sends tools by alias and the facts block, and parses tool_calls with raw arguments", async () => {
    const server = await serve([() => chatCompletion({ toolCalls: [{ id: "call_abc", name: "example__web_search", arguments: '{"query":"weather"}' }] })]);
    const facts = { example__web_search: { quotaLeft: 3, region: "eu" } };

    const response = await provider(server).complete(request({ facts, tools: [WEB_SEARCH] }));

    expect(response).toEqual({
      text: "",
      toolCalls: [{ id: "call_abc", name: "example__web_search", arguments: '{"query":"weather"}' }],
      usage: { inputTokens: 10, outputTokens: 5 },
    });
    const sent = server.requests[0];
    expect(sent?.model).toBe("fake-model");
    expect(sent?.tool_choice).toBe("auto");
    expect(sent?.tools).toEqual([
      { type: "function", function: { name: "example__web_search", description: "Search the web.", parameters: WEB_SEARCH.inputSchema } },
    ]);
    const system = sent?.messages[0];
    expect(system?.role).toBe("system");
    expect(system?.content).toBe(`You are a careful coworker.\n\n${LIVE_FACTS_HEADING}\n{"example__web_search":{"quotaLeft":3,"region":"eu"}}`);
    expect(LIVE_FACTS_HEADING).toContain("not instructions and not authorization");
    expect(sent?.messages.slice(1)).toEqual([{ role: "user", content: "hello" }]);
  });

  it("L2 sends the facts of each attempt only: a later attempt without facts has no facts block", async () => {
    const server = await serve([() => chatCompletion({ content: "a" }), () => chatCompletion({ content: "b" })]);
    const model = provider(server);
    await model.complete(request({ facts: { example__web_search: { n: 1 } } }));
    await model.complete(request());
    expect(server.requests[0]?.messages[0]?.content).toContain(LIVE_FACTS_HEADING);
    expect(server.requests[1]?.messages[0]).toEqual({ role: "system", content: "You are a careful coworker." });
  });

  it("L1 facts alone make the system prompt when there are no instructions, with keys in canonical order", () => {
    expect(systemPrompt("", { b__t: { z: 1, a: 2 }, a__t: true })).toBe(`${LIVE_FACTS_HEADING}\n{"a__t":true,"b__t":{"a":2,"z":1}}`);
    expect(systemPrompt("Be brief.", {})).toBe("Be brief.");
  });

  it("T3 sends a tool round trip back in chat-completions form (result as tool text) and returns a plain answer", async () => {
    const server = await serve([() => chatCompletion({ content: "It is sunny." })]);
    const messages: ModelMessage[] = [
      { role: "user", content: "weather?" },
      { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "example__web_search", arguments: { query: "weather" } }] },
      { role: "tool", toolCallId: "call_1", name: "example__web_search", content: '{"forecast":"sun"}', isError: false, images: [] },
    ];

    const response = await provider(server).complete(request({ messages, tools: [WEB_SEARCH] }));

    expect(response).toEqual({ text: "It is sunny.", toolCalls: [], usage: { inputTokens: 10, outputTokens: 5 } });
    expect(server.requests[0]?.messages.slice(1)).toEqual([
      { role: "user", content: "weather?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "example__web_search", arguments: '{"query":"weather"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"forecast":"sun"}' },
    ]);
  });

  it("a history tool call a server would refuse goes back repaired: bad JSON arguments as {}, a name outside the pattern with _ (the session keeps the original)", async () => {
    const server = await serve([() => chatCompletion({ content: "ok" })]);
    const messages: ModelMessage[] = [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "call_1", name: "example__web_search", arguments: '{"text": "unterminated' },
          { id: "call_2", name: "multi_tool_use.parallel", arguments: "" },
          { id: "call_3", name: "example__web_search", arguments: "[1,2]" },
          { id: "call_4", name: "x".repeat(70), arguments: '{"ok":true}' },
        ],
      },
      { role: "tool", toolCallId: "call_1", name: "example__web_search", content: "Error ARGUMENTS_INVALID: …", isError: true, images: [] },
      { role: "tool", toolCallId: "call_2", name: "multi_tool_use.parallel", content: "Error UNKNOWN_TOOL: …", isError: true, images: [] },
      { role: "tool", toolCallId: "call_3", name: "example__web_search", content: "Error ARGUMENTS_INVALID: …", isError: true, images: [] },
      { role: "tool", toolCallId: "call_4", name: "x".repeat(70), content: "Error UNKNOWN_TOOL: …", isError: true, images: [] },
    ];
    await provider(server).complete(request({ messages, tools: [WEB_SEARCH] }));
    const sent = server.requests[0]!.messages[2] as { tool_calls: { function: { name: string; arguments: string } }[] };
    expect(sent.tool_calls.map((call) => call.function)).toEqual([
      { name: "example__web_search", arguments: "{}" },
      { name: "multi_tool_use_parallel", arguments: "{}" },
      { name: "example__web_search", arguments: "{}" },
      { name: "x".repeat(64), arguments: '{"ok":true}' },
    ]);
    expect((messages[1] as unknown as { toolCalls: { arguments: unknown }[] }).toolCalls[0]!.arguments).toBe('{"text": "unterminated');
  });

  it("an object schema without properties is sent with empty properties (OpenAI refuses it otherwise)", async () => {
    const server = await serve([() => chatCompletion({ content: "ok" })]);
    const ping: ModelToolDefinition = { name: "srv__ping", description: "Ping.", inputSchema: { type: "object" } };
    await provider(server).complete(request({ tools: [ping, WEB_SEARCH] }));
    const tools = server.requests[0]!.tools as unknown as { function: { parameters: unknown } }[];
    expect(tools[0]!.function.parameters).toEqual({ type: "object", properties: {} });
    expect(tools[1]!.function.parameters).toEqual(WEB_SEARCH.inputSchema);
    expect(ping.inputSchema).toEqual({ type: "object" }); // the definition itself is untouched
  });

  it("refuses more tools than maxTools (default 128, OpenAI's limit) before sending anything", async () => {
    const server = await serve([() => chatCompletion({ content: "never" })]);
    const tools = Array.from({ length: 129 }, (_, index) => ({ ...WEB_SEARCH, name: `srv__t${index}` }));
    const error = await rejection(provider(server).complete(request({ tools })));
    expect(error.code).toBe("MODEL_TOO_MANY_TOOLS");
    expect(error.message).toContain("selects 129 tools");
    expect(error.details).toMatchObject({ tools: 129, limit: 128 });
    expect(server.requests).toHaveLength(0);
    await expect(provider(server, { maxTools: 200 }).complete(request({ tools }))).resolves.toMatchObject({ text: "never" });
  });

  it("reads content sent as a list of text parts, and names the server's error in a 200 without choices", async () => {
    const server = await serve([
      () => {
        const completion = chatCompletion({ content: "x" }) as { choices: Array<{ message: Record<string, unknown> }> };
        completion.choices[0]!.message.content = [
          { type: "text", text: "Hello" },
          { type: "text", text: "from parts" },
        ];
        return completion;
      },
      () => ({ error: { message: "the server is overloaded", type: "server_error" } }),
    ]);
    await expect(provider(server).complete(request())).resolves.toMatchObject({ text: "Hello\nfrom parts" });
    const error = await rejection(provider(server).complete(request()));
    expect(error.message).toContain("no choices; the server said: the server is overloaded");
  });

  it("B2 omits tools and tool_choice when no tool is selected, and the system message when there is nothing to say", async () => {
    const server = await serve([() => chatCompletion({ content: "hi" })]);
    const response = await provider(server).complete(request({ instructions: "" }));
    expect(response).toMatchObject({ text: "hi", toolCalls: [] });
    expect(server.requests[0]).not.toHaveProperty("tools");
    expect(server.requests[0]).not.toHaveProperty("tool_choice");
    expect(server.requests[0]?.messages).toEqual([{ role: "user", content: "hello" }]);
  });

  it("T4 delivers tool images as a user image_url message after the whole run of tool results", async () => {
    const server = await serve([() => chatCompletion({ content: "I see a red pixel." })]);
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const messages: ModelMessage[] = [
      { role: "user", content: "screenshot and search" },
      {
        role: "assistant",
        content: "Working on it.",
        toolCalls: [
          { id: "call_shot", name: "example__screenshot", arguments: "{}" },
          { id: "call_search", name: "example__web_search", arguments: '{"query":"x"}' },
        ],
      },
      {
        role: "tool",
        toolCallId: "call_shot",
        name: "example__screenshot",
        content: '{"captured":true}',
        isError: false,
        images: [{ mimeType: "image/png", data: png, description: "the main window" }],
      },
      { role: "tool", toolCallId: "call_search", name: "example__web_search", content: "[]", isError: false, images: [] },
    ];

    await provider(server).complete(request({ messages }));

    const sent = server.requests[0]?.messages.slice(1) ?? [];
    expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "tool", "tool", "user"]);
    expect(sent[2]).toEqual({ role: "tool", tool_call_id: "call_shot", content: '{"captured":true}' });
    const imageMessage = sent[4] as { content: Array<Record<string, unknown>> };
    expect(imageMessage.content[0]).toMatchObject({ type: "text" });
    expect(String(imageMessage.content[0]?.text)).toContain("call_shot");
    expect(String(imageMessage.content[0]?.text)).toContain("the main window");
    expect(imageMessage.content[1]).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${Buffer.from(png).toString("base64")}` },
    });
    // T4: the image travels only as an image part, never inside the tool result text.
    expect(JSON.stringify(sent.slice(0, 4))).not.toContain(Buffer.from(png).toString("base64"));
  });

  it("T4 images: false (a text-only model) sends no image: the tool message says how many were left out", async () => {
    const server = await serve([() => chatCompletion({ content: "No picture, then." })]);
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const image = { mimeType: "image/png", data: png, description: "the main window" };
    const messages: ModelMessage[] = [
      { role: "user", content: "screenshot" },
      { role: "assistant", content: "", toolCalls: [{ id: "call_shot", name: "example__screenshot", arguments: "{}" }] },
      { role: "tool", toolCallId: "call_shot", name: "example__screenshot", content: '{"captured":true}', isError: false, images: [image, image] },
    ];

    await provider(server, { images: false }).complete(request({ messages }));

    const sent = server.requests[0]?.messages.slice(1) ?? [];
    expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
    expect(sent[2]).toEqual({
      role: "tool",
      tool_call_id: "call_shot",
      content: '{"captured":true}\n[2 images returned by this call not shown: the model at this endpoint takes text only]',
    });
    expect(JSON.stringify(server.requests[0])).not.toContain("image_url");
    expect(() => provider(server, { images: "no" as unknown as boolean })).toThrow(/images must be true or false/);
  });

  it("consecutive user messages go as one, images joined to the text after them: roles alternate for strict chat templates", async () => {
    const server = await serve([() => chatCompletion({ content: "ok" })]);
    const png = new Uint8Array([1, 2, 3]);
    const messages: ModelMessage[] = [
      { role: "user", content: "first" },
      { role: "user", content: "second" },
      { role: "assistant", content: "", toolCalls: [{ id: "call_shot", name: "example__screenshot", arguments: "{}" }] },
      { role: "tool", toolCallId: "call_shot", name: "example__screenshot", content: "{}", isError: false, images: [{ mimeType: "image/png", data: png }] },
      { role: "user", content: "third" },
    ];

    await provider(server).complete(request({ messages }));

    const sent = server.requests[0]?.messages.slice(1) ?? [];
    expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(sent[0]).toEqual({ role: "user", content: "first\n\nsecond" });
    const joined = sent[3] as { content: Array<Record<string, unknown>> };
    expect(joined.content.map((part) => part.type)).toEqual(["text", "image_url", "text"]);
    expect(joined.content[2]).toEqual({ type: "text", text: "third" });
  });

  it("E6 HTTP 500 fails with MODEL_REQUEST_FAILED naming status and origin, never the API key", async () => {
    const server = await serve([() => errorReply(500, `internal error while handling key ${API_KEY}`)]);
    const model = provider(server);

    const error = await rejection(model.complete(request()));

    expect(error.code).toBe("MODEL_REQUEST_FAILED");
    expect(error.message).toContain("HTTP 500");
    expect(error.message).toContain(new URL(server.baseURL).origin);
    expect(error.message).toContain("[redacted]");
    expect(error.details).toMatchObject({ reason: "http", status: 500 });
    expect(inspect(error, { depth: 10 })).not.toContain(API_KEY);
    expect(JSON.stringify(error.details)).not.toContain(API_KEY);
    // The key was really in use: it went on the wire, only the error leaves it out.
    expect(server.headers[0]?.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it("E6 keeps a key from an HTTP 401 out of the message and advises checking the key", async () => {
    const server = await serve([() => errorReply(401, `Incorrect API key provided: ${API_KEY}.`, "invalid_request_error")]);
    const error = await rejection(provider(server).complete(request()));
    expect(error.code).toBe("MODEL_REQUEST_FAILED");
    expect(error.message).toContain("HTTP 401");
    expect(error.message).toContain("check the API key");
    expect(inspect(error, { depth: 10 })).not.toContain(API_KEY);
  });

  it("E4 does not retry by default: one failed request is one request on the wire", async () => {
    const server = await serve([() => errorReply(503, "busy"), () => chatCompletion({ content: "late" })]);
    const error = await rejection(provider(server).complete(request()));
    expect(error.code).toBe("MODEL_REQUEST_FAILED");
    expect(server.requests).toHaveLength(1);
  });

  it("E4 retries only when asked, inside one attempt, before any response reaches the runtime", async () => {
    const server = await serve([() => errorReply(503, "busy"), () => chatCompletion({ content: "second try" })]);
    const response = await provider(server, { maxRetries: 1 }).complete(request());
    expect(response.text).toBe("second try");
    expect(server.requests).toHaveLength(2);
  });

  it("fails with MODEL_REQUEST_FAILED when the completion has no choices", async () => {
    const server = await serve([() => ({ ...chatCompletion({ content: "x" }), choices: [] })]);
    const error = await rejection(provider(server).complete(request()));
    expect(error.code).toBe("MODEL_REQUEST_FAILED");
    expect(error.message).toContain("no choices");
    expect(error.details).toMatchObject({ reason: "unreadable-completion" });
  });

  it("fails with MODEL_REQUEST_FAILED when a tool call has no function name", async () => {
    const server = await serve([
      () => {
        const completion = chatCompletion({ toolCalls: [{ name: "x", arguments: "{}" }] }) as { choices: Array<{ message: Record<string, unknown> }> };
        completion.choices[0]!.message.tool_calls = [{ id: "call_1", type: "function", function: { arguments: "{}" } }];
        return completion;
      },
    ]);
    const error = await rejection(provider(server).complete(request()));
    expect(error.code).toBe("MODEL_REQUEST_FAILED");
    expect(error.message).toContain("tool_calls[0] has no function name");
  });

  it("fails with reason truncated when the answer stopped at the token limit: a cut answer is not an answer, its calls do not run", async () => {
    const cut =
      (reply: Parameters<typeof chatCompletion>[0], finishReason: string): FakeScriptStep =>
      () => {
        const completion = chatCompletion(reply) as { choices: Array<Record<string, unknown>> };
        completion.choices[0]!.finish_reason = finishReason;
        return completion;
      };
    const server = await serve([
      cut({ content: "The answer is tru" }, "length"),
      cut({ toolCalls: [{ name: "example__web_search", arguments: '{"query":"wea' }] }, "length"),
      cut({ content: null }, "content_filter"),
      cut({ content: "Complete." }, "stop"),
    ]);
    const model = provider(server);

    const text = await rejection(model.complete(request()));
    expect(text.code).toBe("MODEL_REQUEST_FAILED");
    expect(text.details).toMatchObject({ reason: "truncated", finishReason: "length" });
    expect(text.message).toContain('finish_reason "length"');
    const calls = await rejection(model.complete(request({ tools: [WEB_SEARCH] })));
    expect(calls.details).toMatchObject({ reason: "truncated" });
    const filtered = await rejection(model.complete(request()));
    expect(filtered.details).toMatchObject({ reason: "content-filter", finishReason: "content_filter" });
    expect((await model.complete(request())).text).toBe("Complete.");
  });

  it("fills a missing tool call id and accepts arguments sent as a JSON object", async () => {
    const server = await serve([
      () => ({
        ...chatCompletion({}),
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: null,
              tool_calls: [{ type: "function", function: { name: "example__web_search", arguments: { query: "q" } } }],
            },
            finish_reason: "tool_calls",
          },
        ],
      }),
    ]);
    const response = await provider(server).complete(request({ tools: [WEB_SEARCH] }));
    expect(response.toolCalls[0]?.id).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(response.toolCalls[0]?.arguments).toEqual({ query: "q" });
  });

  it("fails with MODEL_REQUEST_FAILED naming the origin when nothing listens there", async () => {
    const server = await serve([]);
    const baseURL = server.baseURL;
    await server.close();
    const error = await rejection(new OpenAICompatibleProvider({ baseURL, model: "m", apiKey: API_KEY }).complete(request()));
    expect(error.code).toBe("MODEL_REQUEST_FAILED");
    expect(error.details).toMatchObject({ reason: "connection" });
    expect(error.message).toContain(new URL(baseURL).origin);
  });

  it("fails with MODEL_REQUEST_FAILED when the endpoint does not answer within timeoutMs", async () => {
    const server = await serve([() => new Promise(() => {})]);
    const error = await rejection(provider(server, { timeoutMs: 200 }).complete(request()));
    expect(error.code).toBe("MODEL_REQUEST_FAILED");
    expect(error.details).toMatchObject({ reason: "timeout" });
  });

  it("rejects with MODEL_REQUEST_CANCELLED when the signal aborts mid-request", async () => {
    const arrived = deferred();
    const server = await serve([
      () => {
        arrived.resolve();
        return new Promise(() => {});
      },
    ]);
    const controller = new AbortController();
    const pending = provider(server).complete(request({ signal: controller.signal }));
    await arrived.promise;
    controller.abort(new Error("user pressed stop"));

    const error = await rejection(pending);
    expect(error.code).toBe("MODEL_REQUEST_CANCELLED");
    expect(server.requests).toHaveLength(1);
  });

  it("rejects with MODEL_REQUEST_CANCELLED and sends nothing when the signal already aborted", async () => {
    const server = await serve([() => chatCompletion({ content: "never" })]);
    const error = await rejection(provider(server).complete(request({ signal: AbortSignal.abort() })));
    expect(error.code).toBe("MODEL_REQUEST_CANCELLED");
    expect(server.requests).toHaveLength(0);
  });

  it("N4 refuses an alias longer than maxToolNameLength, naming alias and limit, and sends nothing", async () => {
    const server = await serve([() => chatCompletion({ content: "never" })]);
    const alias = `acer__${"a".repeat(59)}`; // 65 bytes
    const long: ModelToolDefinition = { ...WEB_SEARCH, name: alias };

    const error = await rejection(provider(server).complete(request({ tools: [WEB_SEARCH, long] })));

    expect(error.code).toBe("ALIAS_TOO_LONG_FOR_PROVIDER");
    expect(error.message).toContain(alias);
    expect(error.message).toContain("64");
    expect(error.details).toMatchObject({ aliases: [alias], limit: 64 });
    expect(server.requests).toHaveLength(0);
  });

  it("N4 sends an alias of exactly maxToolNameLength, and honours a configured limit", async () => {
    const server = await serve([() => chatCompletion({ content: "ok" }), () => chatCompletion({ content: "never" })]);
    const alias64: ModelToolDefinition = { ...WEB_SEARCH, name: `acer__${"a".repeat(58)}` };
    await provider(server).complete(request({ tools: [alias64] }));
    expect(server.requests[0]?.tools?.[0]?.function.name).toBe(alias64.name);

    const error = await rejection(provider(server, { maxToolNameLength: 20 }).complete(request({ tools: [WEB_SEARCH, alias64] })));
    expect(error.code).toBe("ALIAS_TOO_LONG_FOR_PROVIDER");
    expect(error.message).toContain("at most 20");
    expect(server.requests).toHaveLength(1);
  });

  it("E6 sends neither OPENAI_ADMIN_KEY nor OPENAI_ORG_ID from the environment to the endpoint", async () => {
    const server = await serve([() => chatCompletion({ content: "ok" })]);
    await withEnv({ OPENAI_ADMIN_KEY: "admin-secret-key-123", OPENAI_ORG_ID: "org-secret", OPENAI_PROJECT_ID: "proj-secret" }, () =>
      provider(server, { headers: { "x-host-header": "host-value-123" } }).complete(request()),
    );
    const headers = server.headers[0] ?? {};
    expect(headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(headers["openai-organization"]).toBeUndefined();
    expect(headers["openai-project"]).toBeUndefined();
    expect(headers["x-host-header"]).toBe("host-value-123");
  });

  it("names the server's own error code, which a host branches on, and leaves a numeric one out", async () => {
    const server = await serve([
      () => ({
        status: 400,
        body: {
          error: {
            message: "This model's maximum context length is 8192 tokens",
            type: "invalid_request_error",
            param: "messages",
            code: "context_length_exceeded",
          },
        },
      }),
      () => ({ status: 400, body: { error: { message: "bad request", type: "BadRequestError", code: 400 } } }),
    ]);
    const named = await rejection(provider(server).complete(request()));
    expect(named.message).toContain("answered HTTP 400 (context_length_exceeded): This model's maximum context length is 8192 tokens");
    expect(named.details).toMatchObject({ status: 400, serverCode: "context_length_exceeded" });
    const numeric = await rejection(provider(server).complete(request()));
    expect(numeric.message).toContain("answered HTTP 400: bad request");
    expect(numeric.details).not.toHaveProperty("serverCode");
  });

  it("reads the top-level error body of older vLLM servers, which the openai client reports as having no body", async () => {
    const server = await serve([
      () => ({
        status: 400,
        body: { object: "error", message: "tool_choice auto requires --enable-auto-tool-choice", type: "BadRequestError", param: null, code: 400 },
      }),
    ]);
    const error = await rejection(provider(server).complete(request()));
    expect(error.message).toContain("answered HTTP 400: tool_choice auto requires --enable-auto-tool-choice");
    expect(error.message).not.toContain("no body");
  });

  it("E6 redacts configured header values from server text", async () => {
    const server = await serve([() => errorReply(400, "bad token tok-header-secret-42")]);
    const error = await rejection(provider(server, { headers: { "x-api-token": "tok-header-secret-42" } }).complete(request()));
    expect(error.message).toContain("HTTP 400");
    expect(inspect(error, { depth: 10 })).not.toContain("tok-header-secret-42");
  });
});

describe("OpenAICompatibleProvider catalog and readiness", () => {
  it("I1 lists the configured models with the default first, without I/O", () => {
    const provider = new OpenAICompatibleProvider({
      baseURL: "http://127.0.0.1:9/v1",
      model: "qwen2.5:7b",
      models: ["llama3.1:8b", "qwen2.5:7b"],
      apiKey: "k",
    });
    const rows = provider.listModels();
    expect(rows).not.toBeInstanceOf(Promise);
    expect(rows).toEqual([
      { provider: "openai", model: "qwen2.5:7b" },
      { provider: "openai", model: "llama3.1:8b" },
    ]);
    expect(provider.defaultModel).toBe("qwen2.5:7b");
    expect(provider.maxToolNameLength).toBe(64);
    expect(new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m", id: "ollama" }).listModels()).toEqual([
      { provider: "ollama", model: "m" },
    ]);
  });

  it("I1 readiness is synchronous: api-key for an explicit key, undefined for an unknown model", () => {
    const provider = new OpenAICompatibleProvider({ baseURL: "https://api.openai.com/v1", model: "gpt-4.1-mini", apiKey: API_KEY });
    const readiness = provider.readModelReadiness("gpt-4.1-mini");
    // Read without awaiting: a promise here would fail the equality.
    expect(readiness).toEqual({ accountType: "api-key" });
    expect(provider.readModelReadiness("gpt-unknown")).toBeUndefined();
    expect(JSON.stringify(readiness)).not.toContain(API_KEY);
  });

  it("I1 readiness is a failed observation (undefined) once the endpoint refused the key (401), and comes back when a request succeeds", async () => {
    const server = await serve([
      () => errorReply(403, "This model is not permitted for your key."),
      () => errorReply(401, "Incorrect API key provided.", "invalid_request_error"),
      () => errorReply(500, "busy"),
      () => chatCompletion({ content: "hello again" }),
    ]);
    const model = provider(server);
    expect(model.readModelReadiness("fake-model")).toEqual({ accountType: "api-key" });
    // A 403 refuses one model to a key that may work for the others: readiness stands.
    await rejection(model.complete(request()));
    expect(model.readModelReadiness("fake-model")).toEqual({ accountType: "api-key" });
    await rejection(model.complete(request()));
    expect(model.readModelReadiness("fake-model")).toBeUndefined();
    // A server error says nothing of the key: the refusal stands until a request succeeds.
    await rejection(model.complete(request()));
    expect(model.readModelReadiness("fake-model")).toBeUndefined();
    await model.complete(request());
    expect(model.readModelReadiness("fake-model")).toEqual({ accountType: "api-key" });
  });

  it("I1 readiness reads api-key from OPENAI_API_KEY and local for a keyless endpoint", async () => {
    await withEnv({ OPENAI_API_KEY: "sk-from-env" }, () => {
      const provider = new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m" });
      expect(provider.readModelReadiness("m")).toEqual({ accountType: "api-key" });
    });
    await withEnv({ OPENAI_API_KEY: undefined }, () => {
      const provider = new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:11434/v1", model: "m" });
      expect(provider.readModelReadiness("m")).toEqual({ accountType: "local" });
    });
  });

  it("I1 E6 apiKey: null declares a keyless endpoint: the environment's key is neither read nor sent", async () => {
    const server = await serve([() => chatCompletion({ content: "ok" })]);
    await withEnv({ OPENAI_API_KEY: "sk-from-env-must-not-leave" }, async () => {
      const provider = new OpenAICompatibleProvider({ baseURL: server.baseURL, model: "m", apiKey: null });
      expect(provider.readModelReadiness("m")).toEqual({ accountType: "local" });
      await provider.complete(request());
    });
    expect(server.headers[0]?.authorization).toBe("Bearer not-needed");
  });

  it("sends the not-needed placeholder key to a keyless local endpoint", async () => {
    const server = await serve([() => chatCompletion({ content: "ok" })]);
    await withEnv({ OPENAI_API_KEY: undefined }, () => new OpenAICompatibleProvider({ baseURL: server.baseURL, model: "m" }).complete(request()));
    expect(server.headers[0]?.authorization).toBe("Bearer not-needed");
  });

  it("E6 secrets() lists the key from the option and every non-empty header value, and never the keyless placeholder", () => {
    const configured = new OpenAICompatibleProvider({
      baseURL: "http://127.0.0.1:9/v1",
      model: "m",
      apiKey: API_KEY,
      headers: { "x-gateway-token": "gw-token-123456", "x-short": "v1", "x-empty": "" },
    });
    expect(configured.secrets()).toEqual([API_KEY, "gw-token-123456", "v1"]);
    expect(new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m", apiKey: null }).secrets()).toEqual([]);
  });

  it("E6 secrets() lists the key read from OPENAI_API_KEY and the values of OPENAI_CUSTOM_HEADERS the client sends", async () => {
    await withEnv({ OPENAI_API_KEY: "sk-from-env-0123456789", OPENAI_CUSTOM_HEADERS: "X-Gateway-Key: gw-env-secret-42\nX-Other: x" }, () => {
      const provider = new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m" });
      expect(provider.secrets()).toEqual(["sk-from-env-0123456789", "gw-env-secret-42", "x"]);
    });
    await withEnv({ OPENAI_API_KEY: undefined, OPENAI_CUSTOM_HEADERS: undefined }, () => {
      expect(new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m" }).secrets()).toEqual([]);
    });
  });

  it("E6 a value of OPENAI_CUSTOM_HEADERS is redacted from server text like a configured header", async () => {
    const server = await serve([() => errorReply(400, "bad gateway key gw-env-secret-42")]);
    const error = await withEnv({ OPENAI_CUSTOM_HEADERS: "X-Gateway-Key: gw-env-secret-42" }, () => rejection(provider(server).complete(request())));
    expect(server.headers[0]?.["x-gateway-key"]).toBe("gw-env-secret-42");
    expect(inspect(error, { depth: 10 })).not.toContain("gw-env-secret-42");
  });

  it("refuses unusable options with MODEL_PROVIDER_CONFIG_INVALID naming the field", () => {
    const invalid = (options: OpenAICompatibleOptions): OpenWorkerError => {
      try {
        new OpenAICompatibleProvider(options);
      } catch (error) {
        if (OpenWorkerError.hasCode(error, "MODEL_PROVIDER_CONFIG_INVALID")) return error;
        throw error;
      }
      throw new Error("expected the constructor to throw");
    };
    expect(invalid({ baseURL: "not a url", model: "m" }).details).toEqual({ field: "baseURL" });
    expect(invalid({ baseURL: "ftp://127.0.0.1/v1", model: "m" }).message).toContain("http or https");
    const credentials = invalid({ baseURL: "http://user:hunter22@127.0.0.1/v1", model: "m" });
    expect(credentials.message).not.toContain("hunter22");
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "" }).details).toEqual({ field: "model" });
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", maxToolNameLength: 0 }).details).toEqual({ field: "maxToolNameLength" });
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", maxRetries: -1 }).details).toEqual({ field: "maxRetries" });
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", timeoutMs: 1.5 }).details).toEqual({ field: "timeoutMs" });
    // Node's timers overflow past 2^31 - 1 ms and fire after 1 ms: such a deadline would end every request at once.
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", timeoutMs: 2 ** 31 }).message).toContain("at most 2147483647");
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", maxResponseBytes: 0 }).details).toEqual({ field: "maxResponseBytes" });
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", models: [""] }).details).toEqual({ field: "models[0]" });
  });
});
