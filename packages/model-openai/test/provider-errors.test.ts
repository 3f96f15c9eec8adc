import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAICompatibleProvider } from "../src/index.js";
import { chatCompletion, errorReply, type FakeScriptStep } from "../src/testing/index.js";
import { API_KEY, closeServers, deferred, provider, request, serve, WEB_SEARCH } from "./provider-helpers.js";
import { rejection } from "./support/rejection.js";

afterEach(closeServers);

describe("OpenAICompatibleProvider.complete", () => {
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
