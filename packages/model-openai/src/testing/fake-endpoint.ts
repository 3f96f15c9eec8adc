import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for an OpenAI-compatible endpoint: `POST /v1/chat/completions` on
 * 127.0.0.1, answering from a script, speaking the real wire format (a JSON completion,
 * or server-sent chunks when the request asks `stream: true`). The model endpoint is
 * outside the system, so this is the one place a test replaces something; everything
 * between the provider and the socket is real.
 */

/** A request body as the server received it (parsed JSON). */
export type FakeChatRequest = {
  readonly model: string;
  readonly messages: ReadonlyArray<Record<string, unknown>>;
  readonly tools?: ReadonlyArray<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  readonly tool_choice?: unknown;
  readonly [key: string]: unknown;
};

/** An explicit HTTP answer: any status, any JSON (or text) body. */
export interface FakeHttpReply {
  readonly status: number;
  readonly body: unknown;
}

/** A chat completion JSON object, or an explicit `{ status, body }` answer. */
export type FakeReply = Record<string, unknown> | FakeHttpReply;

/**
 * One scripted answer. It may return a promise: one that never settles keeps the request
 * open (to test cancellation) until `close()` drops the connection.
 */
export type FakeScriptStep = (body: FakeChatRequest, index: number) => FakeReply | Promise<FakeReply>;

/** A running fake endpoint. */
export interface FakeOpenAIServer {
  /** `http://127.0.0.1:<port>/v1`, ready for `OpenAICompatibleProvider`'s `baseURL` (or any OpenAI-compatible client's). */
  readonly baseURL: string;
  /** The parsed body of every chat-completions request, in arrival order. */
  readonly requests: FakeChatRequest[];
  /** The headers of every chat-completions request, parallel to `requests`. */
  readonly headers: IncomingHttpHeaders[];
  /** Stops listening and drops open connections (also ones a step keeps waiting). */
  close(): Promise<void>;
}

/** A tool call in a scripted completion; `id` defaults to `call_<n>`. */
export interface FakeToolCall {
  readonly id?: string;
  readonly name: string;
  /** JSON text, or a value that is serialized. */
  readonly arguments: string | unknown;
}

let completionCounter = 0;

/**
 * A complete `chat.completion` object as OpenAI sends it.
 *
 * @example
 * ```ts
 * chatCompletion({ content: "Done." });
 * chatCompletion({ toolCalls: [{ name: "example__web_search", arguments: { query: "x" } }] });
 * ```
 */
export function chatCompletion(reply: { content?: string | null; toolCalls?: readonly FakeToolCall[]; model?: string }): Record<string, unknown> {
  completionCounter += 1;
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${completionCounter}_${index}`,
    type: "function",
    function: {
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
    },
  }));
  return {
    id: `chatcmpl-fake-${completionCounter}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? "fake-model",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.content ?? (toolCalls.length > 0 ? null : ""),
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop",
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    system_fingerprint: "fp_fake",
  };
}

/** An OpenAI-shaped error answer: `{ error: { message, type, code } }` with `status`. */
export function errorReply(status: number, message: string, type = "server_error"): FakeHttpReply {
  return { status, body: { error: { message, type, param: null, code: null } } };
}

/**
 * Starts the fake endpoint on 127.0.0.1 port 0. Request `i` is answered by `script[i]`;
 * a request beyond the script gets HTTP 500 naming the exhausted script.
 *
 * @example
 * ```ts
 * const server = await startFakeOpenAI([() => chatCompletion({ content: "hi" })]);
 * try {
 *   // new OpenAICompatibleProvider({ baseURL: server.baseURL, model: "fake-model", apiKey: "k" })
 * } finally {
 *   await server.close();
 * }
 * ```
 */
export async function startFakeOpenAI(script: readonly FakeScriptStep[]): Promise<FakeOpenAIServer> {
  const requests: FakeChatRequest[] = [];
  const headers: IncomingHttpHeaders[] = [];

  const server = createServer((req, res) => {
    void answer(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake server failed: ${String(error)}`, type: "server_error" } });
    });
  });

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      sendJson(res, 404, { error: { message: `fake OpenAI: no route ${req.method} ${req.url}`, type: "invalid_request_error" } });
      return;
    }
    let body: FakeChatRequest;
    try {
      body = JSON.parse(text) as FakeChatRequest;
    } catch {
      sendJson(res, 400, { error: { message: "fake OpenAI: body is not JSON", type: "invalid_request_error" } });
      return;
    }
    const index = requests.length;
    requests.push(body);
    headers.push(req.headers);
    const step = script[index];
    if (step === undefined) {
      sendJson(res, 500, errorReply(500, `fake OpenAI script exhausted: request ${index + 1} but only ${script.length} steps`).body);
      return;
    }
    const reply = await step(body, index);
    if (res.destroyed) return;
    if (isHttpReply(reply)) sendJson(res, reply.status, reply.body);
    else if (body.stream === true) sendEvents(res, completionChunks(reply, includeUsage(body)));
    else sendJson(res, 200, reply);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A chat completion as the chunks a streaming endpoint sends for it: the role, the text,
 * each tool call (its name first, then its arguments in two pieces), the finish reason,
 * and the usage last when the request asked for it (`stream_options.include_usage`).
 *
 * @example
 * ```ts
 * completionChunks(chatCompletion({ content: "hi" }), false).length; // 4: role, "h", "i", finish
 * ```
 */
export function completionChunks(completion: Record<string, unknown>, withUsage: boolean): Record<string, unknown>[] {
  const { choices, usage, ...head } = completion as { choices?: Array<Record<string, unknown>>; usage?: unknown };
  const choice = choices?.[0] ?? {};
  const message = (choice.message ?? {}) as {
    content?: string | null;
    tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  };
  const chunk = (delta: Record<string, unknown>, finishReason: unknown = null): Record<string, unknown> => ({
    ...head,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const chunks = [chunk({ role: "assistant", content: "" })];
  const text = message.content ?? "";
  if (text.length > 0) {
    const middle = Math.ceil(text.length / 2);
    chunks.push(chunk({ content: text.slice(0, middle) }), chunk({ content: text.slice(middle) }));
  }
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    const middle = Math.ceil(call.function.arguments.length / 2);
    chunks.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: call.type, function: { name: call.function.name, arguments: call.function.arguments.slice(0, middle) } }],
      }),
    );
    chunks.push(chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments.slice(middle) } }] }));
  }
  chunks.push(chunk({}, choice.finish_reason ?? "stop"));
  if (withUsage && usage !== undefined) chunks.push({ ...head, object: "chat.completion.chunk", choices: [], usage });
  return chunks;
}

function includeUsage(body: FakeChatRequest): boolean {
  const options = body.stream_options;
  return typeof options === "object" && options !== null && (options as { include_usage?: unknown }).include_usage === true;
}

function sendEvents(res: ServerResponse, chunks: readonly Record<string, unknown>[]): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": "req_fake_200" });
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  res.end("data: [DONE]\n\n");
}

function isHttpReply(reply: FakeReply): reply is FakeHttpReply {
  return typeof reply.status === "number" && "body" in reply && !("object" in reply);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, {
    "content-type": typeof body === "string" ? "text/plain" : "application/json",
    "content-length": Buffer.byteLength(text),
    "x-request-id": `req_fake_${status}`,
  });
  res.end(text);
}
