import type { ResolvedTool } from "@openworker/bundle-resolver";
import type { CallAudio, CallReport, ReleasedImage } from "@openworker/runtime";
import type { JsonValue } from "@openworker/tools-sdk";

/** One MCP content block as `serve --mcp` answers it. */
export type ContentBlock = { readonly type: string; readonly [key: string]: unknown };

/** The MCP `CallToolResult` of one governed call. */
export interface ServedResult {
  readonly isError: boolean;
  readonly content: ContentBlock[];
  readonly structuredContent?: { readonly [key: string]: JsonValue };
}

/**
 * A call's report as an MCP result, every content kind as the tool produced it after the
 * pipeline (M11). `images` are the call's images after their consent recheck (T4), in the
 * report's order: each consented image is delivered as an image block where the result put
 * it, a withheld one as the note that says so.
 *
 * An MCP tool's result without structured content (the bridge keeps it as
 * `{ content: [...] }`) is answered block by block: text, images, audio, embedded text
 * resources and resource links as the provider sent them, annotations kept; what the
 * bridge does not keep the bytes of (binary resources, images of a type no model is given,
 * audio past its bounds) as the bridge's note. Structured output (a native tool's JSON, an
 * MCP tool's `structuredContent`) is `structuredContent` when it is an object, beside its
 * text, its images and its audio. A failure is an `isError` result whose text starts
 * `Error CODE:`.
 */
export function servedResult(tool: ResolvedTool, report: CallReport, images: readonly ReleasedImage[]): ServedResult {
  if (report.isError) return { isError: true, content: [{ type: "text", text: report.modelText }] };
  const blocks = contentOnly(tool, report.json);
  const audio = report.audio ?? [];
  if (blocks !== undefined) return { isError: false, content: blocks.map((block) => served(block, images, audio)) };
  const content: ContentBlock[] = [{ type: "text", text: report.modelText }];
  for (const image of images) content.push(imageBlock(image, undefined));
  for (const clip of audio) content.push(audioBlock(clip, undefined));
  return isObject(report.json) ? { isError: false, content, structuredContent: report.json } : { isError: false, content };
}

/** The content blocks of an MCP result the provider sent without structured content; undefined otherwise. */
function contentOnly(tool: ResolvedTool, json: JsonValue | undefined): readonly { readonly [key: string]: JsonValue }[] | undefined {
  // A tool with an output schema always answers structured content (the bridge checks it).
  if (tool.kind !== "mcp" || tool.published.outputSchema !== undefined || !isObject(json)) return undefined;
  const keys = Object.keys(json);
  const { content } = json;
  if (keys.length !== 1 || !Array.isArray(content) || !content.every((block) => isObject(block) && typeof block.type === "string")) return undefined;
  return content as { readonly [key: string]: JsonValue }[];
}

/** One block as the bridge kept it, back as MCP content. */
function served(block: { readonly [key: string]: JsonValue }, images: readonly ReleasedImage[], audio: readonly CallAudio[]): ContentBlock {
  const annotations = isObject(block.annotations) ? { annotations: block.annotations } : {};
  if (block.delivered === false) return { type: "text", text: notDelivered(block), ...annotations };
  if (block.type === "image" && typeof block.image === "number") {
    const released = images[block.image];
    return released === undefined ? { type: "text", text: "[image missing from the call's result]" } : imageBlock(released, block.annotations);
  }
  if (block.type === "audio" && typeof block.audio === "number") {
    const clip = audio[block.audio];
    return clip === undefined ? { type: "text", text: "[audio missing from the call's result]" } : audioBlock(clip, block.annotations);
  }
  return block as ContentBlock;
}

function audioBlock(clip: CallAudio, annotations: JsonValue | undefined): ContentBlock {
  const { mimeType, data } = clip;
  return { type: "audio", mimeType, data: base64(data), ...(isObject(annotations) ? { annotations } : {}) };
}

function base64(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
}

function imageBlock(released: ReleasedImage, annotations: JsonValue | undefined): ContentBlock {
  const kept = isObject(annotations) ? { annotations } : {};
  if ("withheld" in released) return { type: "text", text: released.withheld, ...kept };
  const { mimeType, data } = released.image;
  return { type: "image", mimeType, data: base64(data), ...kept };
}

/** What stands for a block whose bytes the bridge does not keep. */
function notDelivered(block: { readonly [key: string]: JsonValue }): string {
  const bytes = typeof block.bytes === "number" ? `, ${block.bytes} bytes` : "";
  if (block.type === "resource" && isObject(block.resource)) {
    const { uri, mimeType } = block.resource;
    return `[resource ${typeof uri === "string" ? `<${uri}>` : ""}${typeof mimeType === "string" ? ` (${mimeType})` : ""}${bytes}: binary content is not served]`;
  }
  const mimeType = typeof block.mimeType === "string" ? ` ${block.mimeType}` : "";
  return `[${String(block.type)}${mimeType}${bytes}: not served; OpenWorker keeps no ${String(block.type)} bytes of MCP results]`;
}

function isObject(value: unknown): value is { readonly [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
