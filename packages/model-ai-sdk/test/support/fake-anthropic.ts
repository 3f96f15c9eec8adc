import { sendEvents, sendJson, startVendorServer, type Answer, type VendorServer } from "./vendor-server.js";

/**
 * A stand-in for the Anthropic Messages API (`POST /v1/messages`), streaming its answers
 * as Anthropic does: `message_start`, a `content_block_start` / `content_block_delta` /
 * `content_block_stop` run per text or `tool_use` block (text in `text_delta` pieces, tool
 * input in `input_json_delta` pieces), a `ping`, `message_delta` with the stop reason and
 * the output usage, and `message_stop`. Shapes as recorded from the API.
 */
export type AnthropicRequest = {
  readonly model: string;
  readonly max_tokens: number;
  readonly stream?: boolean;
  readonly system?: ReadonlyArray<{ type: string; text: string }> | string;
  readonly messages: ReadonlyArray<{ role: string; content: ReadonlyArray<Record<string, unknown>> | string }>;
  readonly tools?: ReadonlyArray<{ name: string; description?: string; input_schema: unknown }>;
  readonly tool_choice?: unknown;
};

export interface AnthropicReply {
  readonly text?: string;
  readonly toolUses?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly input: unknown }>;
  /** Default `tool_use` when there are tool uses, else `end_turn`. */
  readonly stopReason?: string;
}

let counter = 0;

/** Streams one assistant message. */
export function anthropicStream(reply: AnthropicReply): Answer<AnthropicRequest> {
  return (res, body) => {
    counter += 1;
    const events: Array<{ event: string; data: unknown }> = [
      {
        event: "message_start",
        data: {
          type: "message_start",
          message: {
            id: `msg_01Fake${counter}`,
            type: "message",
            role: "assistant",
            model: body.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 472, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 2, service_tier: "standard" },
          },
        },
      },
    ];
    let index = 0;
    if (reply.text !== undefined) {
      const middle = Math.ceil(reply.text.length / 2);
      events.push(
        { event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "text", text: "" } } },
        { event: "ping", data: { type: "ping" } },
        { event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text: reply.text.slice(0, middle) } } },
        { event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text: reply.text.slice(middle) } } },
        { event: "content_block_stop", data: { type: "content_block_stop", index } },
      );
      index += 1;
    }
    for (const use of reply.toolUses ?? []) {
      const json = JSON.stringify(use.input);
      const middle = Math.ceil(json.length / 2);
      events.push(
        {
          event: "content_block_start",
          data: { type: "content_block_start", index, content_block: { type: "tool_use", id: use.id, name: use.name, input: {} } },
        },
        { event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } } },
        {
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(0, middle) } },
        },
        { event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(middle) } } },
        { event: "content_block_stop", data: { type: "content_block_stop", index } },
      );
      index += 1;
    }
    const stopReason = reply.stopReason ?? ((reply.toolUses ?? []).length > 0 ? "tool_use" : "end_turn");
    events.push(
      { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 89 } } },
      { event: "message_stop", data: { type: "message_stop" } },
    );
    sendEvents(res, events);
  };
}

/** An Anthropic error answer: `{ type: "error", error: { type, message } }` with `status`. */
export function anthropicError(status: number, type: string, message: string): Answer<AnthropicRequest> {
  return (res) => sendJson(res, status, { type: "error", error: { type, message }, request_id: "req_011Fake" });
}

export function startFakeAnthropic(script: readonly Answer<AnthropicRequest>[]): Promise<VendorServer<AnthropicRequest>> {
  return startVendorServer("/v1/messages", script);
}
