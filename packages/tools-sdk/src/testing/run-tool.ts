import type { ProgressEvent } from "../context.js";
import { readToolDescriptor, snapshotDescriptor } from "../descriptor-snapshot.js";
import { argumentsFailure, readHostArguments, schemaMismatchMessage } from "../execution/arguments.js";
import { executeTool, type ExecutionResult } from "../execution/execute.js";
import { OpenWorkerError } from "../errors.js";
import { modelAlias } from "../names.js";
import type { Tool } from "../tool.js";
import { compileInputSchema } from "../validation/compile.js";
import type { TestContextOptions } from "./context.js";

/**
 * Options of {@link runTool}. The ids default to `sessionId: "test-session"`,
 * `turnId: "test-turn"`, `callId: "test-call"`, and `workspace` to `process.cwd()`.
 */
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
 * and name rules, reads the arguments as the runtime reads a host's (their JSON, parsed
 * back, at most 256 KB and 128 levels: `ARGUMENTS_TOO_LARGE`/`ARGUMENTS_INVALID`),
 * compiles the input schema as a native tool's (an unknown `format` is `SCHEMA_INVALID`)
 * and validates them (E5: invalid arguments give a `failed` outcome coded
 * `ARGUMENTS_INVALID`, with the runtime's message, and the tool is not called), then
 * applies the time bound, progress limits and result normalization. The tool is called
 * with `sessionId` `"test-session"`, `turnId` `"test-turn"`, `callId` `"test-call"` and
 * the current directory as `workspace` unless `options` say otherwise: a tool that keeps
 * per-session state (consent, `modelContext` facts) finds it under `"test-session"`.
 *
 * @example
 * ```ts
 * const result = await runTool(shout, { text: "hi" });
 * expect(result.outcome).toBe("succeeded");
 * expect(result.output?.json).toEqual({ text: "HI" });
 * ```
 */
export async function runTool(tool: Tool, args: unknown, options: RunToolOptions = {}): Promise<RunToolResult> {
  // The registry's own reading: a descriptor the kit accepts is one the host can register
  // (plain-JSON schema, no sandbox placement for native code, A4), with its codes.
  const { descriptor, placement } = snapshotDescriptor(readToolDescriptor(tool, "runTool"));
  if (placement !== undefined && placement !== "host") {
    throw new OpenWorkerError(
      placement === "sandbox" ? "NATIVE_SANDBOX_PLACEMENT" : "PLACEMENT_INVALID",
      `native tool ${JSON.stringify(descriptor.name)}: its descriptor gives placement ${JSON.stringify(placement)}; native tools are trusted host code and always run on "host", so the registry refuses it: remove the placement, or ship code that needs isolation as an MCP server the host can run in a sandbox`,
      { details: { name: descriptor.name, placement } },
    );
  }
  if (options.timeoutMs !== undefined && !(typeof options.timeoutMs === "number" && Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) {
    throw new OpenWorkerError(
      "OPTIONS_INVALID",
      `runTool: timeoutMs must be a positive number of milliseconds (it lowers the 75 s bound), got ${String(options.timeoutMs)}`,
    );
  }
  const progressEvents: ProgressEvent[] = [];
  const refused = (code: string, message: string): RunToolResult => ({
    outcome: "failed",
    error: { code, message },
    progress: { accepted: 0, dropped: 0, jsonBytes: 0, breaches: [] },
    durationMs: 0,
    progressEvents,
  });
  // As the runtime takes a host's arguments: their JSON, parsed back (a Date becomes its
  // ISO text, NaN null, a BigInt or a cycle a failure), bounded in size and depth. The
  // tool never gets the test's own object.
  const reading = readHostArguments(args);
  if (!reading.ok) {
    const { code, message } = argumentsFailure(reading);
    return refused(code, message);
  }
  // A native tool's schema: its partner can fix an unknown format, so it is refused.
  const check = compileInputSchema(descriptor.inputSchema, descriptor.name, { strictFormats: true }).check(reading.value);
  if (!check.ok) return refused("ARGUMENTS_INVALID", schemaMismatchMessage(modelAlias(descriptor.name), check.message));
  const result = await executeTool(tool, reading.value, {
    sessionId: options.sessionId ?? "test-session",
    turnId: options.turnId ?? "test-turn",
    callId: options.callId ?? "test-call",
    workspace: options.workspace ?? process.cwd(),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    onProgress: (event) => progressEvents.push(event),
    toolName: descriptor.name,
  });
  return { ...result, progressEvents };
}
