import type { Static, TObject } from "typebox";
import type { ToolContext } from "./context.js";
import type { ToolDescriptor } from "./descriptor.js";
import type { JsonSchema, JsonValue } from "./json.js";
import type { ToolOutput } from "./output.js";
import type { Tool } from "./tool.js";
import type { ToolError } from "./tool-error.js";

/** What {@link defineTool} takes: a descriptor, a typed `call`, and optional T5 hooks. */
export interface ToolDefinition<Schema extends TObject> {
  /** Qualified name, `namespace.tool`. */
  readonly name: string;
  readonly description: string;
  /** A TypeBox object schema (plain JSON Schema at run time). */
  readonly inputSchema: Schema;
  readonly version: string;
  /** Runs the tool; `args` is typed from `inputSchema` and already validated. */
  call(args: Static<Schema>, context: ToolContext): Promise<ToolOutput | ToolError> | ToolOutput | ToolError;
  modelContext?(sessionId: string): JsonValue | undefined;
  turnFinished?(sessionId: string, completed: boolean): void;
  revoke?(sessionId: string): void;
}

/**
 * Defines a native tool whose arguments are typed from a TypeBox schema (T6). It adds
 * no behaviour of its own: the schema is the JSON Schema the model sees, and the
 * runtime validates arguments against it before `call` runs.
 *
 * @example
 * ```ts
 * import { Type } from "typebox";
 * const shout = defineTool({
 *   name: "example.shout",
 *   description: "Uppercase the input text.",
 *   version: "1.0.0",
 *   inputSchema: Type.Object({ text: Type.String() }),
 *   call: (args) => ({ json: { text: args.text.toUpperCase() } }),
 * });
 * ```
 */
export function defineTool<Schema extends TObject>(definition: ToolDefinition<Schema>): Tool {
  const descriptor: ToolDescriptor = Object.freeze({
    name: definition.name,
    description: definition.description,
    inputSchema: definition.inputSchema as unknown as JsonSchema,
    version: definition.version,
  });
  const tool: Tool = {
    descriptor: () => descriptor,
    call: async (context, args) => definition.call(args as Static<Schema>, context),
  };
  if (definition.modelContext) tool.modelContext = (sessionId) => definition.modelContext!(sessionId);
  if (definition.turnFinished) {
    tool.turnFinished = (sessionId, completed) => definition.turnFinished!(sessionId, completed);
  }
  if (definition.revoke) tool.revoke = (sessionId) => definition.revoke!(sessionId);
  return tool;
}
