import type { ToolContext } from "./context.js";
import type { ToolDescriptor } from "./descriptor.js";
import type { JsonValue } from "./json.js";
import type { ToolOutput } from "./output.js";
import type { ToolError } from "./tool-error.js";

/**
 * A native tool (T1, T5). Implementations are trusted host code: they must be safe for
 * concurrent sessions, non-blocking and cooperatively cancellable (T7). Do not spawn
 * detached work, swallow cancellation, or write secrets into progress, results or errors.
 *
 * **Argument order**: `call(context, args)`, context first, as the seed writes it.
 * `defineTool`'s `call(args, context)` is the other way round (arguments first, typed
 * from the schema); `defineTool` swaps them for you. `call` and the hooks are function-typed
 * properties, not methods, so that `strictFunctionTypes` checks their parameters: a
 * hand-made tool that writes `call(args: unknown, context: ToolContext)` here is a compile
 * error, not a crash at run time (method parameters are checked both ways round, and that
 * type-checked). Writing them with method syntax in an object or a class is still fine.
 *
 * Most partners write tools with `defineTool` or `codeTool` instead of implementing
 * this interface by hand.
 *
 * @example
 * ```ts
 * const ping: Tool = {
 *   descriptor: () => ({ name: "example.ping", description: "Answers pong.", version: "1", inputSchema: { type: "object" } }),
 *   async call(context, args) {
 *     context.progress.report({ message: "pinging" });
 *     return { json: { pong: true, args } };
 *   },
 * };
 * ```
 */
export interface Tool {
  /** Name, description, input schema and version. Called once, at registration. */
  descriptor(): ToolDescriptor;
  /**
   * Runs the tool with arguments already validated against `inputSchema` (E5): context
   * first, then arguments. Resolve with a {@link ToolOutput}, or return/throw a
   * {@link ToolError} for an expected failure. Any other exception is a crash and stops
   * the turn (E4).
   */
  readonly call: (context: ToolContext, args: unknown) => Promise<ToolOutput | ToolError>;
  /**
   * Model-safe live facts for this session (T5, L1), gathered on every model attempt
   * while the tool is selected. Synchronous, bounded (4 KB), non-blocking, no I/O;
   * never credentials, pixels or private control payloads. Facts are context, never
   * authorization. Return `undefined` for nothing to say.
   */
  readonly modelContext?: (sessionId: string) => JsonValue | undefined;
  /**
   * Called when a turn ends (T5). When absent the runtime calls `revoke(sessionId)`.
   * A tool with expiring app consent may keep unused access across a successful
   * clarification reply (`completed === true`).
   */
  readonly turnFinished?: (sessionId: string, completed: boolean) => void;
  /** Drops every access granted within the session. Called on cancellation and session close. */
  readonly revoke?: (sessionId: string) => void;
}

/**
 * Applies T5's default: calls `tool.turnFinished(sessionId, completed)` when the tool
 * has it, else `tool.revoke(sessionId)`.
 *
 * @example
 * ```ts
 * finishTurn(tool, "session-1", true);
 * ```
 */
export function finishTurn(tool: Tool, sessionId: string, completed: boolean): void {
  if (tool.turnFinished) tool.turnFinished(sessionId, completed);
  else tool.revoke?.(sessionId);
}

/**
 * Anything a partner package can register its tools into; `ToolRegistry` from
 * `@openworker/registry` is one. Partner packages export
 * `register(registry: ToolRegistrar)` and depend on nothing but this SDK.
 *
 * @example
 * ```ts
 * export function register(registry: ToolRegistrar): void {
 *   registry.register(webSearch);
 * }
 * ```
 */
export interface ToolRegistrar {
  register(tool: Tool): void;
}
