import { hash } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { IMAGE_MIME_TYPES, LIMITS, utf8Bytes, type JsonObject, type JsonValue, type ToolImage } from "@openworker/tools-sdk";
import {
  boundErrorMessage,
  FAULT_CODES,
  normalizeToolOutput,
  type AudioAttachment,
  type CallError,
  type CallOutcome,
  type LimitBreach,
  type NormalizedOutput,
} from "@openworker/tools-sdk/internal/execution";
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
 * left in place: never base64 in JSON). Audio, binary resources and images of a type the
 * model is not given are not delivered: a placeholder with their size stands in. Each
 * block keeps its `annotations` (audience, priority, lastModified) in the JSON (M7).
 *
 * The model text is every content block in order, the server's words for the model: text
 * blocks as they are, an embedded text resource under a line naming it, and one bracketed
 * line for a resource link and for each block that is not delivered. Beside
 * `structuredContent` the data reaches the model once (M7, E3): a text block the JSON
 * already holds (its serialization, compact or pretty-printed, or one of its string
 * values, as server-filesystem sends a file's text) gives way to the JSON, which stands
 * where the first such block stood; other text blocks stay, and the JSON follows them
 * when none gave way. With no text at all (no content, or only delivered images) it is
 * the JSON. The text is bounded like the result (E3). `isError: true` is a tool error
 * (`failed`, `MCP_TOOL_ERROR`) carrying that text.
 *
 * Servers mirror content blocks into `structuredContent` (an image's base64 under
 * `{ type: "image", data }`): the bytes of images, audio and binary resources anywhere in
 * it are taken out as in content (T4), and an image the content already carries is
 * delivered once.
 */
export function normalizeCallResult(result: CallToolResult): SettledCall {
  const content = Array.isArray(result.content) ? result.content : [];
  const lines: (string | undefined)[] = [];
  // Where in `lines` each text block stands, for the ones the JSON may already hold.
  const textLines: number[] = [];
  const media: Media = { images: [], indexOf: new Map(), audio: [], audioIndexOf: new Map() };
  const images = media.images;
  const blocks: JsonValue[] = [];
  for (const block of content) {
    if (block.type === "text") textLines.push(lines.length);
    blocks.push(convertBlock(block, lines as string[], media));
  }

  if (result.isError === true) {
    const message = lines.join("\n") || (result.structuredContent ? JSON.stringify(result.structuredContent) : "the tool reported an error without a message");
    return { outcome: "failed", error: { code: MCP_ERROR_CODES.toolError, message: boundErrorMessage(message) } };
  }

  const structured = result.structuredContent === undefined ? undefined : (withoutMediaBytes(result.structuredContent, media, 0) as JsonObject);
  const json: JsonValue = structured !== undefined ? structured : { content: blocks };
  const normalized = normalizeToolOutput({ json, images });
  if (!normalized.ok) {
    if ("breach" in normalized) return breachOf(normalized.breach);
    return {
      outcome: "crashed",
      error: { code: MCP_ERROR_CODES.resultInvalid, message: unusableResult(normalized.invalid.message, structured !== undefined) },
    };
  }
  const output = media.audio.length === 0 ? normalized.output : { ...normalized.output, audio: media.audio };
  if (lines.length === 0) return { outcome: "succeeded", output };
  let text: string;
  if (structured === undefined) text = lines.join("\n");
  else {
    // The first text block the JSON holds is replaced by it, the others dropped.
    const holds = holdsText(result.structuredContent, structured);
    let placed = false;
    for (const index of textLines) {
      if (!holds(lines[index]!)) continue;
      lines[index] = placed ? undefined : output.text;
      placed = true;
    }
    if (!placed) lines.push(output.text);
    text = lines.filter((line) => line !== undefined).join("\n");
  }
  // The text is bounded as the result is (E3): its bracketed notes are longer than the
  // placeholders they stand for, and content beside structured content is outside the JSON.
  const bytes = utf8Bytes(text);
  if (bytes > LIMITS.resultBytes) {
    return breachOf({
      limit: "resultBytes",
      actual: bytes,
      max: LIMITS.resultBytes,
      message: `result text for the model is ${bytes} bytes; the limit is ${LIMITS.resultBytes}`,
    });
  }
  // Not `{ ...output, text }`: a spread followed by a property is slow in this V8 (~2 µs).
  if (output.audio !== undefined)
    return { outcome: "succeeded", output: { json: output.json, text, bytes: output.bytes, images: output.images, audio: output.audio } };
  return { outcome: "succeeded", output: { json: output.json, text, bytes: output.bytes, images: output.images } };
}

/**
 * Text longer than this (16 times the result bound) is not parsed to compare it with
 * structuredContent: it stays text, and the model text is over its bound.
 */
const PARSED_TEXT_LENGTH = 16 * LIMITS.resultBytes;

/**
 * Whether a text block says nothing the JSON does not: it is a serialization of
 * `structuredContent` (as sent, or with its media bytes out), however formatted, or
 * equals one of the JSON's string values. What it needs (the serialization, the strings)
 * is computed the first time it is needed.
 */
function holdsText(sent: unknown, structured: JsonObject): (text: string) => boolean {
  let serialized: string | undefined;
  let strings: Set<string> | undefined;
  return (text) => {
    // What the SDK's servers write: compared without parsing.
    if (text === (serialized ??= JSON.stringify(sent))) return true;
    if (text.length <= PARSED_TEXT_LENGTH && /^\s*\{/.test(text)) {
      const parsed = parseJson(text);
      if (parsed !== undefined && (jsonEqual(parsed, sent, 0) || (structured !== sent && jsonEqual(parsed, structured, 0)))) return true;
    }
    return (strings ??= stringsOf(structured, new Set(), 0)).has(text);
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Deep equality of two JSON values, key order aside; values nested past the media walk's depth are unequal. */
function jsonEqual(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object" || depth > MEDIA_WALK_DEPTH) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!jsonEqual(a[index], b[index], depth + 1)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/** Every string value in `value` (not keys), into `into`. */
function stringsOf(value: unknown, into: Set<string>, depth: number): Set<string> {
  if (typeof value === "string") into.add(value);
  else if (value !== null && typeof value === "object" && depth <= MEDIA_WALK_DEPTH) {
    for (const item of Array.isArray(value) ? value : Object.values(value)) stringsOf(item, into, depth + 1);
  }
  return into;
}

/** A call that failed without a fault (the model is told; the turn goes on), its message bounded. */
export function failedCall(code: string, message: string): SettledCall {
  return { outcome: "failed", error: { code, message: boundErrorMessage(message) } };
}

// The JSON checker's words: "result is not JSON: at /a/b nests deeper than 128 levels".
const NOT_JSON = /^result is not JSON: (?:the result|at (\/[\s\S]*?)) (nests deeper than \d+ levels|is -?Infinity|is NaN)$/;
/** How much of the path to the offending value a message shows: keys may be any size. */
const PATH_SHOWN = 512;

/**
 * The message for a result the JSON checker refused. A provider's result was parsed from
 * JSON, so "is not JSON" misleads; what can be wrong is its shape (nesting deeper than the
 * checker follows, a number past the double range). The problem comes first and the path
 * after it, cut short, so the bound on error messages never cuts off the problem: a
 * result nested under keys of 100 KB each used to give a 13 MB message.
 */
function unusableResult(message: string, structured: boolean): string {
  const what = structured ? "structuredContent" : "content";
  const parsed = NOT_JSON.exec(message);
  if (!parsed) return boundErrorMessage(`the tool's result cannot be used: ${message}`);
  const [, path, problem] = parsed;
  const where = path === undefined ? "" : ` (at ${path.length > PATH_SHOWN ? `${path.slice(0, PATH_SHOWN)}… (${path.length} characters)` : path})`;
  return boundErrorMessage(`the tool's result cannot be used: its ${what} ${problem}${where}`);
}

function breachOf(breach: LimitBreach): SettledCall {
  return { outcome: "limit_exceeded", breach, error: { code: FAULT_CODES.limitExceeded, message: breach.message } };
}

/** The images a result delivers, and the index of each by its base64 (one delivery for the same bytes). */
interface Media {
  readonly images: ToolImage[];
  readonly indexOf: Map<string, number>;
  /** Audio clips kept for a host that delivers them, in order (the same bytes kept once). */
  readonly audio: AudioAttachment[];
  readonly audioIndexOf: Map<string, number>;
}

/** At most this many audio clips of one result are kept, each at most {@link AUDIO_BYTES} (the image bounds, T4). */
const AUDIO_PER_CALL = LIMITS.imagesPerCall;
const AUDIO_BYTES = LIMITS.imageBytes;

/** The index of an audio clip to keep, added the first time its bytes are seen; undefined past the bounds. */
function keepAudio(media: Media, mimeType: string, data: string, bytes: number): number | undefined {
  const key = `${mimeType} ${data}`;
  const seen = media.audioIndexOf.get(key);
  if (seen !== undefined) return seen;
  if (bytes > AUDIO_BYTES || media.audio.length >= AUDIO_PER_CALL) return undefined;
  media.audio.push({ mimeType, data: decodeBase64(data) });
  media.audioIndexOf.set(key, media.audio.length - 1);
  return media.audio.length - 1;
}

/** The index of an image to deliver, added the first time its bytes are seen. */
function deliverImage(media: Media, mimeType: string, data: string): number {
  const key = `${mimeType} ${data}`;
  const seen = media.indexOf.get(key);
  if (seen !== undefined) return seen;
  media.images.push({ mimeType, data: decodeBase64(data) });
  media.indexOf.set(key, media.images.length - 1);
  return media.images.length - 1;
}

/** Deeper than this, a value is left as it is: the result's JSON check refuses it anyway. */
const MEDIA_WALK_DEPTH = 130;

/**
 * `value` (a result's structuredContent) with the bytes of every image, audio clip and
 * binary resource in it replaced by the placeholders content gets: the same object when
 * there were none.
 */
function withoutMediaBytes(value: unknown, media: Media, depth: number): unknown {
  if (value === null || typeof value !== "object" || depth > MEDIA_WALK_DEPTH) return value;
  if (Array.isArray(value)) {
    let changed: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item = withoutMediaBytes(value[index], media, depth + 1);
      if (item !== value[index]) (changed ??= value.slice())[index] = item;
    }
    return changed ?? value;
  }
  const record = value as Record<string, unknown>;
  if ((record.type === "image" || record.type === "audio") && typeof record.data === "string" && typeof record.mimeType === "string") {
    return withAnnotations(convertMediaBlock(record.type, record.mimeType, record.data, undefined, media), record.annotations);
  }
  if (
    record.type === "resource" &&
    record.resource !== null &&
    typeof record.resource === "object" &&
    typeof (record.resource as { blob?: unknown }).blob === "string"
  ) {
    const { blob, ...rest } = record.resource as Record<string, unknown>;
    return withAnnotations(
      { type: "resource", resource: { ...withoutMeta(rest as JsonObject), bytes: base64Bytes(blob as string), delivered: false } },
      record.annotations,
    );
  }
  let changed: Record<string, unknown> | undefined;
  for (const key of Object.keys(record)) {
    const item = withoutMediaBytes(record[key], media, depth + 1);
    if (item !== record[key]) (changed ??= { ...record })[key] = item;
  }
  return changed ?? value;
}

/** An image or audio block as the JSON keeps it (bytes out, T4); its note for the model, if any, is pushed to `lines`. */
function convertMediaBlock(type: "image" | "audio", mimeType: string, data: string, lines: string[] | undefined, media: Media): JsonObject {
  if (type === "image" && IMAGE_MIME_TYPES.includes(mimeType)) return { type: "image", mimeType, image: deliverImage(media, mimeType, data) };
  const bytes = base64Bytes(data);
  if (type === "audio") {
    // Kept for a host that delivers audio (serve --mcp's client); the model gets a note, the JSON a reference.
    const audio = keepAudio(media, mimeType, data, bytes);
    lines?.push(`[audio ${mimeType}, ${bytes} bytes: not given to the model${audio === undefined ? "; over the bounds of audio kept per call" : ""}]`);
    return audio === undefined
      ? { type, mimeType, bytes, delivered: false }
      : { type, mimeType, bytes, audio, sha256: `sha256:${hash("sha256", media.audio[audio]!.data, "hex")}` };
  }
  lines?.push(`[image ${mimeType}, ${bytes} bytes: not delivered; only ${IMAGE_MIME_TYPES.join(", ")} images reach the model]`);
  return { type, mimeType, bytes, delivered: false };
}

/** One content block as the JSON keeps it; its text for the model, if any, is pushed to `lines`. */
function convertBlock(block: ContentBlock, lines: string[], media: Media): JsonValue {
  switch (block.type) {
    case "text":
      lines.push(block.text);
      return withAnnotations({ type: "text", text: block.text }, block.annotations);
    // A valid MCP image the model is not given (svg, bmp…) and audio are noted: the rest of the result stands.
    case "image":
    case "audio":
      return withAnnotations(convertMediaBlock(block.type, block.mimeType, block.data, lines, media), block.annotations);
    case "resource_link": {
      const { annotations, ...rest } = block as unknown as JsonObject;
      const link = withAnnotations(withoutMeta(rest), annotations);
      lines.push(`[resource link ${describeResource(block)}${typeof block.description === "string" ? `: ${block.description}` : ""}]`);
      return link;
    }
    case "resource": {
      const resource = block.resource as Record<string, unknown>;
      if (typeof resource.text === "string") {
        lines.push(`[resource ${describeResource(resource)}]`, resource.text);
        return withAnnotations({ type: "resource", resource: withoutMeta(resource as JsonObject) }, block.annotations);
      }
      const { blob, ...rest } = resource;
      const bytes = typeof blob === "string" ? base64Bytes(blob) : 0;
      lines.push(`[resource ${describeResource(resource)}, ${bytes} bytes: not delivered; binary resources do not reach the model]`);
      return withAnnotations({ type: "resource", resource: { ...withoutMeta(rest as JsonObject), bytes, delivered: false } }, block.annotations);
    }
    default: {
      const type = String((block as { type?: unknown }).type ?? "unknown");
      lines.push(`[content of type ${JSON.stringify(type)}: not delivered]`);
      return { type, delivered: false };
    }
  }
}

const ROLES = new Set(["user", "assistant"]);
const LAST_MODIFIED_LENGTH = 64;

/**
 * `converted` with the MCP annotations of its block (M7): who it is for (`audience`), how
 * much it matters (`priority`, 0 to 1) and when it changed (`lastModified`), and nothing
 * else an annotations object may carry. The block's own object when there are none.
 */
function withAnnotations(converted: JsonObject, annotations: unknown): JsonObject {
  if (annotations === undefined || annotations === null || typeof annotations !== "object") return converted;
  const { audience, priority, lastModified } = annotations as { audience?: unknown; priority?: unknown; lastModified?: unknown };
  const kept: JsonObject = {};
  if (Array.isArray(audience)) kept.audience = [...new Set(audience.filter((role): role is string => typeof role === "string" && ROLES.has(role)))];
  if (typeof priority === "number" && priority >= 0 && priority <= 1) kept.priority = priority;
  if (typeof lastModified === "string" && lastModified.length <= LAST_MODIFIED_LENGTH) kept.lastModified = lastModified;
  if (Object.keys(kept).length === 0) return converted;
  converted.annotations = kept;
  return converted;
}

/** `name <uri> (mimeType)`, with whichever of them the resource has. */
function describeResource(resource: { readonly uri?: unknown; readonly name?: unknown; readonly mimeType?: unknown }): string {
  const uri = typeof resource.uri === "string" ? `<${resource.uri}>` : "";
  const name = typeof resource.name === "string" && resource.name !== "" ? `${resource.name} ` : "";
  const mimeType = typeof resource.mimeType === "string" ? ` (${resource.mimeType})` : "";
  return `${name}${uri}${mimeType}`;
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
