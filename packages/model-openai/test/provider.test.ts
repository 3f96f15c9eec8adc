import { afterEach, describe, expect, it } from "vitest";
import { LIVE_FACTS_HEADING, systemPrompt } from "@openworker/runtime";
import type { ModelMessage, ModelToolDefinition } from "@openworker/runtime";
import { chatCompletion } from "../src/testing/index.js";
import { API_KEY, closeServers, provider, request, serve, WEB_SEARCH, withEnv } from "./provider-helpers.js";
import { rejection } from "./support/rejection.js";

afterEach(closeServers);

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
});
