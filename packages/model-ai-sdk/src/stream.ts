import { randomUUID } from "node:crypto";
import type { LanguageModelV4FinishReason, LanguageModelV4StreamPart, LanguageModelV4Usage } from "@ai-sdk/provider";
import type { ModelToolCall, ModelUsage } from "@openworker/runtime";

/** What one streamed answer held once its stream ended. */
export interface StreamedAnswer {
  readonly text: string;
  readonly toolCalls: readonly ModelToolCall[];
  readonly usage: ModelUsage | undefined;
  /** The `finish` part's reason; undefined when the stream ended without one. */
  readonly finish: LanguageModelV4FinishReason | undefined;
}

/** The stream ended with an `error` part (the vendor's error event): the attempt fails with it. */
export class StreamErrorPart extends Error {
  constructor(readonly error: unknown) {
    super("the model's stream reported an error");
    this.name = "StreamErrorPart";
  }
}

/**
 * Reads a `doStream` result to its end. Text deltas are joined in order (reasoning is
 * the model's own and is not part of the answer); each client-executed `tool-call` part
 * is one call, its `input` the JSON text the model wrote (the runtime validates it
 * against the selected schema, E5). Calls the vendor executed itself are not ours to run
 * and are left out. Two calls with one id get distinct ids, so each result answers its
 * own call. An `error` part rejects with {@link StreamErrorPart}.
 */
export async function readStream(stream: ReadableStream<LanguageModelV4StreamPart>): Promise<StreamedAnswer> {
  let text = "";
  const toolCalls: ModelToolCall[] = [];
  const ids = new Set<string>();
  let usage: ModelUsage | undefined;
  let finish: LanguageModelV4FinishReason | undefined;
  const reader = stream.getReader();
  let ended = false;
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      switch (part.type) {
        case "text-delta":
          text += part.delta;
          break;
        case "tool-call": {
          if (part.providerExecuted === true) break;
          const id = part.toolCallId.length > 0 && !ids.has(part.toolCallId) ? part.toolCallId : `call_${randomUUID()}`;
          ids.add(id);
          toolCalls.push({ id, name: part.toolName, arguments: part.input.length > 0 ? part.input : "{}" });
          break;
        }
        case "finish":
          finish = part.finishReason;
          usage = readUsage(part.usage);
          break;
        case "error":
          throw new StreamErrorPart(part.error);
        default:
          break;
      }
    }
  } finally {
    // A stream left mid-answer (an error part, a failed read) is cancelled: its connection is dropped, not drained.
    if (!ended) void reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  return { text, toolCalls, usage, finish };
}

function readUsage(usage: LanguageModelV4Usage): ModelUsage | undefined {
  const inputTokens = usage.inputTokens.total;
  const outputTokens = usage.outputTokens.total;
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  return { ...(inputTokens === undefined ? {} : { inputTokens }), ...(outputTokens === undefined ? {} : { outputTokens }) };
}
