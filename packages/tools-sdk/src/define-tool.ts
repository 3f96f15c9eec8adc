import type { Static, TObject } from "typebox";
import type { ToolContext } from "./context.js";
import type { ToolDescriptor } from "./descriptor.js";
import type { JsonSchema, JsonValue } from "./json.js";
import type { ToolOutput } from "./output.js";
import type { Tool } from "./tool.js";
import type { ToolError } from "./tool-error.js";

/**
 * What `json` cannot be in a result of {@link defineTool}'s `call`: a Promise (or any
 * thenable: a forgotten `await`), a function, a `Map` or a `Set`. None has a JSON form:
 * the runtime refuses them (`RESULT_NOT_JSON`), and `defineTool` makes them a compile error.
 */
export type NotJson = PromiseLike<unknown> | ((...args: never[]) => unknown) | ReadonlyMap<unknown, unknown> | ReadonlySet<unknown>;

/**
 * `Result`, or `never` when its `json` may be {@link NotJson}: `{ json: fetchTotal() }`
 * (an un-awaited Promise) does not type-check. `any` passes (`JSON.parse` gives it), and
 * only the top level of `json` is looked at: a Promise deeper inside is still refused
 * at run time (`RESULT_NOT_JSON`).
 */
export type CheckedResult<Result> = Result extends { readonly json: infer Json }
  ? 0 extends 1 & Json
    ? Result
    : [Extract<Json, NotJson>] extends [never]
      ? Result
      : never
  : Result;

/** What `defineTool`'s `call` returns, sync or async, with each result checked by {@link CheckedResult}. */
export type CheckedReturn<Return> = Return extends PromiseLike<infer Result> ? Promise<CheckedResult<Result>> : CheckedResult<Return>;

/**
 * What {@link defineTool} takes: a descriptor, a typed `call`, and optional T5 hooks.
 * `call` takes `(args, context)`, arguments first, unlike {@link Tool}'s `call(context, args)`.
 * `Return` is inferred from `call`; it is there so that {@link CheckedReturn} can refuse
 * a `json` that is not JSON.
 */
export interface ToolDefinition<Schema extends TObject, Return extends ToolResult | Promise<ToolResult> = ToolResult | Promise<ToolResult>> {
  /** Qualified name, `namespace.tool`. */
  readonly name: string;
  readonly description: string;
  /** A TypeBox object schema (plain JSON Schema at run time). */
  readonly inputSchema: Schema;
  readonly version: string;
  /**
   * Runs the tool: **arguments first**, typed from `inputSchema` and already validated,
   * then the context. Its `json` may not be a Promise, a function, a Map or a Set
   * ({@link CheckedResult}).
   */
  call(args: Static<Schema>, context: ToolContext): CheckedReturn<Return>;
  modelContext?(sessionId: string): JsonValue | undefined;
  turnFinished?(sessionId: string, completed: boolean): void;
  revoke?(sessionId: string): void;
}

/** A result of a call: an output or a `ToolError`. */
type ToolResult = ToolOutput | ToolError;

/**
 * Defines a native tool whose arguments are typed from a TypeBox schema (T6). It adds
 * no behaviour of its own: the schema is the JSON Schema the model sees, and the
 * runtime validates arguments against it before `call` runs. The definition's
 * `call(args, context)` takes the arguments first; the {@link Tool} it returns has the
 * contract's `call(context, args)`.
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
export function defineTool<Schema extends TObject, Return extends ToolResult | Promise<ToolResult>>(definition: ToolDefinition<Schema, Return>): Tool {
  const descriptor: ToolDescriptor = Object.freeze({
    name: definition.name,
    description: definition.description,
    inputSchema: definition.inputSchema as unknown as JsonSchema,
    version: definition.version,
  });
  return {
    descriptor: () => descriptor,
    call: async (context, args) => definition.call(args as Static<Schema>, context) as ToolResult | Promise<ToolResult>,
    ...(definition.modelContext ? { modelContext: (sessionId: string) => definition.modelContext!(sessionId) } : {}),
    ...(definition.turnFinished ? { turnFinished: (sessionId: string, completed: boolean) => definition.turnFinished!(sessionId, completed) } : {}),
    ...(definition.revoke ? { revoke: (sessionId: string) => definition.revoke!(sessionId) } : {}),
  };
}
