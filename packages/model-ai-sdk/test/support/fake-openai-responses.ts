import { sendEvents, sendJson, startVendorServer, type Answer, type VendorServer } from "./vendor-server.js";

/**
 * A stand-in for the OpenAI Responses API (`POST /v1/responses`), streaming as OpenAI
 * does: `response.created`, `response.in_progress`, per output item `output_item.added`,
 * its deltas (`output_text.delta` for a message, `function_call_arguments.delta` for a
 * function call) and `output_item.done`, then `response.completed` with the usage. Each
 * event carries its `sequence_number`. Shapes as recorded from the API.
 */
export type ResponsesRequest = {
  readonly model: string;
  readonly stream?: boolean;
  readonly instructions?: string;
  readonly input: ReadonlyArray<Record<string, unknown>>;
  readonly tools?: ReadonlyArray<{ type: string; name: string; description?: string; parameters: unknown }>;
  readonly tool_choice?: unknown;
};

export interface ResponsesReply {
  readonly text?: string;
  readonly functionCalls?: ReadonlyArray<{ readonly callId: string; readonly name: string; readonly arguments: unknown }>;
  /** `incomplete` answers with `response.incomplete` and this reason (`max_output_tokens`). */
  readonly incomplete?: string;
}

let counter = 0;

export function responsesStream(reply: ResponsesReply): Answer<ResponsesRequest> {
  return (res, body) => {
    counter += 1;
    const id = `resp_67cFake${counter}`;
    let sequence = 0;
    const events: Array<{ event: string; data: Record<string, unknown> }> = [];
    const push = (type: string, data: Record<string, unknown>): void => {
      events.push({ event: type, data: { type, sequence_number: sequence++, ...data } });
    };
    const response = (status: string, output: unknown[], usage: unknown) => ({
      id,
      object: "response",
      created_at: 1_767_225_600,
      status,
      error: null,
      incomplete_details: reply.incomplete === undefined || status === "in_progress" ? null : { reason: reply.incomplete },
      instructions: body.instructions ?? null,
      model: `${body.model}-2026-01-01`,
      output,
      parallel_tool_calls: true,
      tool_choice: "auto",
      tools: [],
      usage,
    });
    push("response.created", { response: response("in_progress", [], null) });
    push("response.in_progress", { response: response("in_progress", [], null) });
    const output: unknown[] = [];
    if (reply.text !== undefined) {
      const item = { id: `msg_67cFake${counter}`, type: "message", status: "in_progress", role: "assistant", content: [] };
      const outputIndex = output.length;
      push("response.output_item.added", { output_index: outputIndex, item });
      push("response.content_part.added", {
        item_id: item.id,
        output_index: outputIndex,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      });
      const middle = Math.ceil(reply.text.length / 2);
      for (const delta of [reply.text.slice(0, middle), reply.text.slice(middle)]) {
        push("response.output_text.delta", { item_id: item.id, output_index: outputIndex, content_index: 0, delta, logprobs: [] });
      }
      push("response.output_text.done", { item_id: item.id, output_index: outputIndex, content_index: 0, text: reply.text, logprobs: [] });
      const part = { type: "output_text", text: reply.text, annotations: [] };
      push("response.content_part.done", { item_id: item.id, output_index: outputIndex, content_index: 0, part });
      const done = { ...item, status: "completed", content: [part] };
      push("response.output_item.done", { output_index: outputIndex, item: done });
      output.push(done);
    }
    for (const [index, call] of (reply.functionCalls ?? []).entries()) {
      const args = JSON.stringify(call.arguments);
      const item = { id: `fc_67cFake${counter}_${index}`, type: "function_call", status: "in_progress", arguments: "", call_id: call.callId, name: call.name };
      const outputIndex = output.length;
      push("response.output_item.added", { output_index: outputIndex, item });
      const middle = Math.ceil(args.length / 2);
      for (const delta of [args.slice(0, middle), args.slice(middle)])
        push("response.function_call_arguments.delta", { item_id: item.id, output_index: outputIndex, delta });
      push("response.function_call_arguments.done", { item_id: item.id, output_index: outputIndex, arguments: args });
      const done = { ...item, status: "completed", arguments: args };
      push("response.output_item.done", { output_index: outputIndex, item: done });
      output.push(done);
    }
    const usage = {
      input_tokens: 318,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 42,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 360,
    };
    if (reply.incomplete === undefined) push("response.completed", { response: response("completed", output, usage) });
    else push("response.incomplete", { response: response("incomplete", output, usage) });
    sendEvents(res, events);
  };
}

/** An OpenAI error answer: `{ error: { message, type, param, code } }` with `status`. */
export function responsesError(status: number, message: string, code: string | null = null): Answer<ResponsesRequest> {
  return (res) => sendJson(res, status, { error: { message, type: "invalid_request_error", param: null, code } });
}

export function startFakeResponses(script: readonly Answer<ResponsesRequest>[]): Promise<VendorServer<ResponsesRequest>> {
  return startVendorServer("/v1/responses", script);
}
