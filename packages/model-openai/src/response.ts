import { randomUUID } from "node:crypto";
import type { JsonValue } from "@openworker/tools-sdk";
import type { ClientOptions } from "openai";
import type { ModelResponse, ModelToolCall, ModelUsage } from "@openworker/runtime";

/**
 * A completion read into a response (with `choices[0].finish_reason` when the server sent
 * one), or why it could not be read (words for the error message).
 */
export type CompletionReading =
  { readonly ok: true; readonly response: ModelResponse; readonly finishReason: string | undefined } | { readonly ok: false; readonly problem: string };

type Fetch = NonNullable<ClientOptions["fetch"]>;

/**
 * At most this much of an error response's body is read (the message keeps 500
 * characters of it); the rest is dropped unread.
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** The error a response body is ended with once it passes `maxResponseBytes`. */
export class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the response body passed ${limit} bytes (maxResponseBytes) and was dropped`);
    this.name = "ResponseTooLargeError";
  }
}

/**
 * `fetch` for the openai client with a bound on what one response may make us buffer:
 * a successful response whose body passes `maxResponseBytes` ends with
 * {@link ResponseTooLargeError} (at once when its Content-Length says so), and an error
 * response is cut at {@link MAX_ERROR_BODY_BYTES}. Either way the rest is never read and
 * the connection is dropped. A body with a Content-Length within the bound and no
 * Content-Encoding passes untouched: fetch never delivers more than the declared length,
 * only a compressed body can grow past it.
 */
export function boundedFetch(maxResponseBytes: number, base: Fetch = fetch): Fetch {
  return async (input, init) => {
    const response = await base(input, init);
    const body = response.body;
    if (body === null) return response;
    if (!response.ok) return errorResponse(response, body.pipeThrough(firstBytes(Math.min(maxResponseBytes, MAX_ERROR_BODY_BYTES))));
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (declared > maxResponseBytes) {
      void body.cancel().catch(() => {});
      throw new ResponseTooLargeError(maxResponseBytes);
    }
    const encoding = response.headers.get("content-encoding");
    const plain = encoding === null || encoding.trim().toLowerCase() === "identity";
    if (Number.isSafeInteger(declared) && plain) return response;
    return withBody(response, body.pipeThrough(byteBound(maxResponseBytes)));
  };
}

/**
 * An error response, its body (already cut at {@link MAX_ERROR_BODY_BYTES}) read whole so
 * that the error shape of older servers can be read: vLLM before 0.6 and some proxies
 * answer `{"object":"error","message":…,"type":…,"code":…}` at the top level, where the
 * openai client looks only under `error` and would report "status code (no body)". That
 * shape is passed on as `{"error":{…}}`; every other body passes unchanged.
 */
async function errorResponse(response: Response, body: ReadableStream<Uint8Array>): Promise<Response> {
  const text = await new Response(body).text();
  const headers = new Headers(response.headers);
  // The text is decoded and may have been cut: its original length and encoding no longer apply.
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(topLevelErrorAsNested(text) ?? text, { status: response.status, statusText: response.statusText, headers });
}

function topLevelErrorAsNested(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || "error" in parsed) return undefined;
  const { message, type, code } = parsed as { message?: unknown; type?: unknown; code?: unknown };
  if (typeof message !== "string") return undefined;
  return JSON.stringify({
    error: { message, ...(typeof type === "string" ? { type } : {}), ...(typeof code === "string" || typeof code === "number" ? { code } : {}) },
  });
}

function withBody(response: Response, body: ReadableStream<Uint8Array>): Response {
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** Passes bytes through and errors the stream (which cancels the source) once they pass `limit`. */
function byteBound(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > limit) controller.error(new ResponseTooLargeError(limit));
      else controller.enqueue(chunk);
    },
  });
}

/** Passes the first `limit` bytes and ends the stream there (which cancels the source). */
function firstBytes(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let left = limit;
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk.byteLength <= left ? chunk : chunk.subarray(0, left));
      left -= Math.min(left, chunk.byteLength);
      if (left === 0) controller.terminate();
    },
  });
}

/**
 * Reads `choices[0].message` of a chat completion into a {@link ModelResponse}. A compatible
 * server is outside the system, so its JSON is checked, not trusted.
 *
 * Tool-call arguments stay the raw JSON text the model wrote: the runtime validates them
 * against the selected schema (E5), and bad JSON is the model's failed call, not ours.
 * A server that sends arguments as a JSON object (some local servers do) is accepted as is;
 * missing arguments read as `"{}"`, what a call of a tool without parameters means.
 * A missing call id is replaced by a fresh `call_<uuid>` so the result can be paired
 * with its call; an index would repeat across turns of one session.
 */
export function readCompletion(completion: unknown): CompletionReading {
  const problem = (text: string): CompletionReading => ({ ok: false, problem: text });
  if (!isRecord(completion)) return problem("the response body is not a JSON object");
  const { choices } = completion;
  if (!Array.isArray(choices) || choices.length === 0) {
    // A proxy or an overloaded server may answer 200 with an error object instead.
    const message = isRecord(completion.error) && typeof completion.error.message === "string" ? completion.error.message : undefined;
    return problem(message === undefined ? "the response has no choices" : `the response has no choices; the server said: ${message.slice(0, 500)}`);
  }
  const first: unknown = choices[0];
  if (!isRecord(first) || !isRecord(first.message)) return problem("choices[0] has no message");
  const message = first.message;

  const text =
    typeof message.content === "string"
      ? message.content
      : Array.isArray(message.content)
        ? textOfParts(message.content)
        : typeof message.refusal === "string"
          ? message.refusal
          : "";
  const rawCalls = message.tool_calls ?? [];
  if (!Array.isArray(rawCalls)) return problem("choices[0].message.tool_calls is not an array");

  const toolCalls: ModelToolCall[] = [];
  const ids = new Set<string>();
  for (const [index, raw] of rawCalls.entries()) {
    const call = readToolCall(raw);
    if (typeof call === "string") return problem(`choices[0].message.tool_calls[${index}] ${call}`);
    // Some local servers number calls per answer or repeat one id: each call of an answer
    // gets its own id, or its result would answer both calls in the history sent back.
    toolCalls.push(ids.has(call.id) ? { ...call, id: `call_${randomUUID()}` } : call);
    ids.add(toolCalls.at(-1)!.id);
  }
  const finishReason = typeof first.finish_reason === "string" ? first.finish_reason : undefined;
  const usage = readUsage(completion.usage);
  return { ok: true, response: { text, toolCalls, ...(usage ? { usage } : {}) }, finishReason };
}

/** `usage` of a completion, when the server counted (`prompt_tokens`, `completion_tokens`). */
function readUsage(usage: unknown): ModelUsage | undefined {
  if (!isRecord(usage)) return undefined;
  const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined);
  const inputTokens = count(usage.prompt_tokens);
  const outputTokens = count(usage.completion_tokens);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  return { ...(inputTokens === undefined ? {} : { inputTokens }), ...(outputTokens === undefined ? {} : { outputTokens }) };
}

function readToolCall(raw: unknown): ModelToolCall | string {
  if (!isRecord(raw)) return "is not an object";
  if (raw.type !== undefined && raw.type !== "function") return `has type ${JSON.stringify(raw.type)}; only "function" calls are supported`;
  const fn = raw.function;
  if (!isRecord(fn) || typeof fn.name !== "string" || fn.name.length === 0) return "has no function name";
  const id = typeof raw.id === "string" && raw.id.length > 0 ? raw.id : `call_${randomUUID()}`;
  const args = fn.arguments;
  if (args === undefined || args === null) return { id, name: fn.name, arguments: "{}" };
  if (typeof args === "string") return { id, name: fn.name, arguments: args };
  return { id, name: fn.name, arguments: args as JsonValue };
}

/** `content` as some compatible servers send it, a list of parts: the text parts, joined. */
function textOfParts(parts: unknown[]): string {
  return parts
    .map((part) => (isRecord(part) && (part.type === "text" || part.type === undefined) && typeof part.text === "string" ? part.text : ""))
    .filter((text) => text.length > 0)
    .join("\n");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
