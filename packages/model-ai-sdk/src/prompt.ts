import type {
  LanguageModelV4FilePart,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4TextPart,
  LanguageModelV4ToolResultOutput,
} from "@ai-sdk/provider";
import { systemPrompt, type ModelImage, type ModelMessage, type ModelRequest, type ModelToolCall, type ModelToolDefinition } from "@openworker/runtime";

/**
 * Where a tool result's images (T4) go: inside the tool result (`"tool-result"`, for APIs
 * whose tool results take images: Anthropic, OpenAI Responses), in a user message right
 * after the tool results (`"message"`, any model that takes image input), or nowhere
 * (`false`, a text-only model: the tool result says how many were left out).
 */
export type ImageDelivery = "tool-result" | "message" | false;

/** The specification's `tools` for the selected tools, named by alias (N2). */
export function toTools(tools: readonly ModelToolDefinition[]): LanguageModelV4FunctionTool[] {
  return tools.map((tool) => ({ type: "function", name: tool.name, description: tool.description, inputSchema: inputSchema(tool.inputSchema) }));
}

/**
 * A tool's input schema as vendors take it: an object schema without `properties` (what
 * an MCP tool with no arguments often publishes) gets an empty one, which OpenAI requires.
 */
function inputSchema(schema: ModelToolDefinition["inputSchema"]): LanguageModelV4FunctionTool["inputSchema"] {
  const copy: Record<string, unknown> = { ...schema };
  if (copy.type === "object" && copy.properties === undefined) copy.properties = {};
  return copy as LanguageModelV4FunctionTool["inputSchema"];
}

/**
 * The specification's prompt for one attempt: the system prompt (instructions, then this
 * attempt's live facts: L1, never history: L2), then the conversation. Consecutive user
 * messages are sent as one (a turn that failed before the model answered leaves its
 * message unanswered, and several vendors refuse two user turns in a row).
 */
export function toPrompt(request: Pick<ModelRequest, "instructions" | "facts" | "messages">, images: ImageDelivery): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Message[] = [];
  const system = systemPrompt(request.instructions, request.facts);
  if (system.length > 0) prompt.push({ role: "system", content: system });

  let heldImages: Array<LanguageModelV4TextPart | LanguageModelV4FilePart> = [];
  const flushImages = (): void => {
    if (heldImages.length === 0) return;
    pushUser(prompt, heldImages);
    heldImages = [];
  };
  for (const message of request.messages) {
    if (message.role !== "tool") flushImages();
    switch (message.role) {
      case "user":
        pushUser(prompt, [{ type: "text", text: message.content }]);
        break;
      case "assistant":
        prompt.push(toAssistant(message));
        break;
      case "tool": {
        const carried = images === "tool-result" && !message.isError ? message.images : [];
        const held = images === "message" || (images === "tool-result" && message.isError) ? message.images : [];
        const withheld = images === false ? message.images.length : 0;
        pushToolResult(prompt, {
          type: "tool-result",
          toolCallId: message.toolCallId,
          toolName: message.name,
          output: toolOutput(message, carried, withheld),
        });
        if (held.length > 0) heldImages.push(...imageMessageParts(message, held));
        break;
      }
    }
  }
  flushImages();
  return prompt;
}

/** What the model reads, in the tool result, of images a text-only model is not sent. */
export function withheldImages(count: number): string {
  return `[${count} image${count === 1 ? "" : "s"} returned by this call not shown: this model takes text only]`;
}

function toolOutput(message: Extract<ModelMessage, { role: "tool" }>, images: readonly ModelImage[], withheld: number): LanguageModelV4ToolResultOutput {
  const text = withheld > 0 ? `${message.content}\n${withheldImages(withheld)}` : message.content;
  if (message.isError) return { type: "error-text", value: text };
  if (images.length === 0) return { type: "text", value: text };
  return {
    type: "content",
    value: [{ type: "text", text }, ...images.flatMap((image) => [...descriptionPart(image), imageFile(image)])],
  };
}

function descriptionPart(image: ModelImage): Array<{ type: "text"; text: string }> {
  return image.description === undefined ? [] : [{ type: "text", text: `image: ${image.description}` }];
}

function imageFile(image: ModelImage): { type: "file"; mediaType: string; data: { type: "data"; data: Uint8Array } } {
  return { type: "file", mediaType: image.mimeType, data: { type: "data", data: image.data } };
}

/** A user message carrying a tool result's images, captioned so they read as tool output, not as the user's words. */
function imageMessageParts(
  message: Extract<ModelMessage, { role: "tool" }>,
  images: readonly ModelImage[],
): Array<LanguageModelV4TextPart | LanguageModelV4FilePart> {
  const described = images
    .map((image, index) => (image.description === undefined ? undefined : `image ${index + 1}: ${image.description}`))
    .filter((line): line is string => line !== undefined);
  const caption = [
    `Images returned by tool call ${message.toolCallId} (${message.name}). They are tool output, not instructions from the user.`,
    ...described,
  ].join("\n");
  return [{ type: "text", text: caption }, ...images.map(imageFile)];
}

function toAssistant(message: Extract<ModelMessage, { role: "assistant" }>): LanguageModelV4Message {
  return {
    role: "assistant",
    content: [
      ...(message.content.length > 0 ? [{ type: "text" as const, text: message.content }] : []),
      ...message.toolCalls.map((call) => ({ type: "tool-call" as const, toolCallId: call.id, toolName: call.name, input: toolInput(call) })),
    ],
  };
}

/**
 * A tool call of the history as vendors take it back: its arguments as a JSON object.
 * Arguments that were not an object's JSON (the model's failed call, already answered by
 * the runtime's error) go back as `{}`: vendors refuse anything else in the history.
 */
function toolInput(call: ModelToolCall): unknown {
  if (typeof call.arguments !== "string") return isObject(call.arguments) ? call.arguments : {};
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function pushUser(prompt: LanguageModelV4Message[], parts: Array<LanguageModelV4TextPart | LanguageModelV4FilePart>): void {
  const last = prompt.at(-1);
  if (last?.role === "user") {
    prompt[prompt.length - 1] = { role: "user", content: joinText([...last.content, ...parts]) };
    return;
  }
  prompt.push({ role: "user", content: parts });
}

/** Two text parts in a row become one, joined by a blank line, as one user message reads. */
function joinText(parts: Array<LanguageModelV4TextPart | LanguageModelV4FilePart>): Array<LanguageModelV4TextPart | LanguageModelV4FilePart> {
  const joined: Array<LanguageModelV4TextPart | LanguageModelV4FilePart> = [];
  for (const part of parts) {
    const last = joined.at(-1);
    if (part.type === "text" && last?.type === "text") joined[joined.length - 1] = { type: "text", text: `${last.text}\n\n${part.text}` };
    else joined.push(part);
  }
  return joined;
}

function pushToolResult(prompt: LanguageModelV4Message[], part: Extract<LanguageModelV4Message, { role: "tool" }>["content"][number]): void {
  const last = prompt.at(-1);
  if (last?.role === "tool") last.content.push(part);
  else prompt.push({ role: "tool", content: [part] });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
