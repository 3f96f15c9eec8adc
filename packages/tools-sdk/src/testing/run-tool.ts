import type { ProgressEvent } from "../context.js";
import { checkDescriptor } from "../descriptor.js";
import { executeTool, type ExecutionResult } from "../execution/execute.js";
import type { Tool } from "../tool.js";
import { compileInputSchema } from "../validation/compile.js";
import type { TestContextOptions } from "./context.js";

/** Options of {@link runTool}. */
export interface RunToolOptions extends TestContextOptions {
  /** Cancels the call, as a cancelled turn would. */
  readonly signal?: AbortSignal;
  /** Lower the 75 s bound to test your timeout handling quickly. */
  readonly timeoutMs?: number;
}

/** What {@link runTool} saw: the runtime's result plus every accepted progress event. */
export interface RunToolResult extends ExecutionResult {
  readonly progressEvents: readonly ProgressEvent[];
}

/**
 * Runs a tool exactly as the runtime's call boundary will (T7): checks the descriptor
 * and name rules, compiles the input schema and validates the arguments (E5: invalid
 * arguments give a `failed` outcome coded `ARGUMENTS_INVALID` and the tool is not
 * called), then applies the time bound, progress limits and result normalization.
 *
 * @example
 * ```ts
 * const result = await runTool(shout, { text: "hi" });
 * expect(result.outcome).toBe("succeeded");
 * expect(result.output?.json).toEqual({ text: "HI" });
 * ```
 */
export async function runTool(tool: Tool, args: unknown, options: RunToolOptions = {}): Promise<RunToolResult> {
  const descriptor = tool.descriptor();
  checkDescriptor(descriptor);
  const check = compileInputSchema(descriptor.inputSchema, descriptor.name).check(args);
  const progressEvents: ProgressEvent[] = [];
  if (!check.ok) {
    return {
      outcome: "failed",
      error: { code: "ARGUMENTS_INVALID", message: `arguments for ${descriptor.name} do not match its input schema: ${check.message}` },
      progress: { accepted: 0, dropped: 0, jsonBytes: 0, breaches: [] },
      durationMs: 0,
      progressEvents,
    };
  }
  const result = await executeTool(tool, args, {
    sessionId: options.sessionId ?? "test-session",
    turnId: options.turnId ?? "test-turn",
    callId: options.callId ?? "test-call",
    workspace: options.workspace ?? process.cwd(),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    onProgress: (event) => progressEvents.push(event),
  });
  return { ...result, progressEvents };
}
