import type { ToolDescriptor } from "./descriptor.js";
import type { JsonSchema, JsonValue } from "./json.js";
import type { Tool } from "./tool.js";
import { ToolError } from "./tool-error.js";

/**
 * What a code-tool handler returns: `{ ok: value }` on success, `{ err: reason }` for a
 * refusal the model sees as a failed call (agentd's `Ok(value)` / `Err(reason)`).
 */
export type CodeToolResult = { readonly ok: JsonValue } | { readonly err: string };

/** A code-tool handler: JSON arguments in, a {@link CodeToolResult} out, sync or async. */
export type CodeToolHandler = (args: JsonValue) => CodeToolResult | Promise<CodeToolResult>;

/** The `ToolError` code a code tool's `{ err }` result carries. */
export const CODE_TOOL_ERROR = "CODE_TOOL_ERROR";

/**
 * The one-function convenience for simple tools (T6), in agentd's `CodeTool` shape:
 * name, description, input JSON Schema and a handler. The handler gets no context; use
 * `defineTool` when a tool needs cancellation, progress or images. `version` defaults
 * to `"1"`: pass your own and change it whenever the handler changes behaviour.
 *
 * @example
 * ```ts
 * const shout = codeTool(
 *   "example.shout",
 *   "Uppercase the input text.",
 *   { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
 *   (args) => ({ ok: { text: String((args as { text: string }).text).toUpperCase() } }),
 * );
 * ```
 */
export function codeTool(
  name: string,
  description: string,
  inputSchema: JsonSchema,
  handler: CodeToolHandler,
  options: { readonly version?: string } = {},
): Tool {
  const descriptor: ToolDescriptor = Object.freeze({ name, description, inputSchema, version: options.version ?? "1" });
  return {
    descriptor: () => descriptor,
    async call(_context, args) {
      const result = await handler(args as JsonValue);
      if (typeof result === "object" && result !== null) {
        if ("err" in result && typeof result.err === "string") return new ToolError(CODE_TOOL_ERROR, result.err);
        if ("ok" in result) return { json: result.ok };
      }
      throw new TypeError(`code tool ${name}: handler must return { ok: value } or { err: "reason" }`);
    },
  };
}
