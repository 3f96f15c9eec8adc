import { randomUUID } from "node:crypto";
import type { JsonValue } from "@openworker/tools-sdk";
import type { ModelResponse, ModelToolCall } from "./types.js";

/** A completion read into a response, or why it could not be (words for the error message). */
export type CompletionReading = { readonly ok: true; readonly response: ModelResponse } | { readonly ok: false; readonly problem: string };

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
  if (!Array.isArray(choices) || choices.length === 0) return problem("the response has no choices");
  const first: unknown = choices[0];
  if (!isRecord(first) || !isRecord(first.message)) return problem("choices[0] has no message");
  const message = first.message;

  const text = typeof message.content === "string" ? message.content : typeof message.refusal === "string" ? message.refusal : "";
  const rawCalls = message.tool_calls ?? [];
  if (!Array.isArray(rawCalls)) return problem("choices[0].message.tool_calls is not an array");

  const toolCalls: ModelToolCall[] = [];
  for (const [index, raw] of rawCalls.entries()) {
    const call = readToolCall(raw);
    if (typeof call === "string") return problem(`choices[0].message.tool_calls[${index}] ${call}`);
    toolCalls.push(call);
  }
  return { ok: true, response: { text, toolCalls } };
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
