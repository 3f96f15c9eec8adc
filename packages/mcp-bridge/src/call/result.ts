import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject, JsonValue, ToolImage } from "@openworker/tools-sdk";
import { boundErrorMessage, FAULT_CODES, normalizeToolOutput, type CallError, type CallOutcome, type LimitBreach, type NormalizedOutput } from "@openworker/tools-sdk/execution";
import { MCP_ERROR_CODES } from "../codes.js";

/** A call's result before the progress figures and duration are added. */
export interface SettledCall {
  readonly outcome: CallOutcome;
  readonly output?: NormalizedOutput;
  readonly error?: CallError;
  readonly breach?: LimitBreach;
}

type ContentBlock = CallToolResult["content"][number];

/**
 * Normalizes an MCP `CallToolResult` like a native `ToolOutput` (T3, T4, E3):
 * `structuredContent`, when present, is the JSON; otherwise `{ content: [...] }` with
 * text blocks as text, resource links kept as objects, and images moved out to
 * `images` (decoded bytes, an `{ type: "image", mimeType, image: <index> }` placeholder
 * left in place: never base64 in JSON). Audio and binary resources are not delivered:
 * a placeholder with their size stands in. The model text is the text blocks joined by
 * newlines, or the JSON when there is no text (or when structured content is present).
 * `isError: true` is a tool error (`failed`, `MCP_TOOL_ERROR`) carrying the text.
 */
export function normalizeCallResult(result: CallToolResult): SettledCall {
  const content = Array.isArray(result.content) ? result.content : [];
  const texts: string[] = [];
  const images: ToolImage[] = [];
  const blocks: JsonValue[] = [];
  for (const block of content) blocks.push(convertBlock(block, texts, images));

  if (result.isError === true) {
    const message = texts.join("\n") || (result.structuredContent ? JSON.stringify(result.structuredContent) : "the tool reported an error without a message");
    return { outcome: "failed", error: { code: MCP_ERROR_CODES.toolError, message: boundErrorMessage(message) } };
  }

  const structured = result.structuredContent;
  const json: JsonValue = structured !== undefined ? (structured as JsonObject) : { content: blocks };
  const normalized = normalizeToolOutput({ json, images });
  if (!normalized.ok) {
    if ("breach" in normalized) {
      return { outcome: "limit_exceeded", breach: normalized.breach, error: { code: FAULT_CODES.limitExceeded, message: normalized.breach.message } };
    }
    return { outcome: "crashed", error: { code: MCP_ERROR_CODES.resultInvalid, message: normalized.invalid.message } };
  }
  const text = structured === undefined && texts.length > 0 ? texts.join("\n") : normalized.output.text;
  // Not `{ ...output, text }`: a spread followed by a property is slow in this V8 (~2 µs).
  const output = normalized.output;
  return { outcome: "succeeded", output: { json: output.json, text, bytes: output.bytes, images: output.images } };
}

function convertBlock(block: ContentBlock, texts: string[], images: ToolImage[]): JsonValue {
  switch (block.type) {
    case "text":
      texts.push(block.text);
      return { type: "text", text: block.text };
    case "image": {
      images.push({ mimeType: block.mimeType, data: decodeBase64(block.data) });
      return { type: "image", mimeType: block.mimeType, image: images.length - 1 };
    }
    case "audio":
      return { type: "audio", mimeType: block.mimeType, bytes: base64Bytes(block.data), delivered: false };
    case "resource_link":
      return withoutMeta(block as unknown as JsonObject);
    case "resource": {
      const resource = block.resource as Record<string, unknown>;
      if (typeof resource.text === "string") return { type: "resource", resource: withoutMeta(resource as JsonObject) };
      const { blob, ...rest } = resource;
      return {
        type: "resource",
        resource: { ...withoutMeta(rest as JsonObject), bytes: typeof blob === "string" ? base64Bytes(blob) : 0, delivered: false },
      };
    }
    default:
      return { type: String((block as { type?: unknown }).type ?? "unknown"), delivered: false };
  }
}

function withoutMeta(value: JsonObject): JsonObject {
  const { _meta: _dropped, ...rest } = value;
  return rest;
}

function decodeBase64(data: string): Uint8Array {
  const buffer = Buffer.from(data, "base64");
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
