import type { ProgressEvent, ToolContext } from "../context.js";
import { createBoundedProgress, type ProgressStats } from "../execution/progress.js";

/** Ids and workspace for a test context; every field has a default. */
export interface TestContextOptions {
  /** Defaults to `"test-session"`. */
  readonly sessionId?: string;
  /** Defaults to `"test-turn"`. */
  readonly turnId?: string;
  /** Defaults to `"test-call"`. */
  readonly callId?: string;
  /** Defaults to `process.cwd()`. */
  readonly workspace?: string;
}

/**
 * What {@link createTestContext} returns: not a `ToolContext` itself, but one in
 * `context`, beside the handles a test needs to drive it.
 */
export interface TestContext {
  /** The `ToolContext` to pass to `tool.call(context, args)`. */
  readonly context: ToolContext;
  /** Aborts `context.signal`, as a cancelled turn would. */
  abort(reason?: unknown): void;
  /** Progress events the bounded reporter accepted, in order. */
  readonly progress: readonly ProgressEvent[];
  /** Accepted and dropped counts and the limits breached (E2). */
  readonly progressStats: ProgressStats;
}

/**
 * Makes a `ToolContext` for calling a tool directly in a unit test, with the same
 * bounded progress reporter the runtime uses (E2) and a controllable abort. It returns
 * `{ context, abort, progress, progressStats }`: pass `context` to the tool. Ids default
 * as {@link TestContextOptions} says (`sessionId` `"test-session"`).
 *
 * @example
 * ```ts
 * const { context, abort, progress } = createTestContext();
 * const pending = tool.call(context, { seconds: 10 });
 * abort();
 * ```
 */
export function createTestContext(options: TestContextOptions = {}): TestContext {
  const controller = new AbortController();
  const progress: ProgressEvent[] = [];
  const bounded = createBoundedProgress((event) => progress.push(event));
  return {
    context: {
      sessionId: options.sessionId ?? "test-session",
      turnId: options.turnId ?? "test-turn",
      callId: options.callId ?? "test-call",
      workspace: options.workspace ?? process.cwd(),
      signal: controller.signal,
      progress: bounded.reporter,
    },
    abort: (reason) => controller.abort(reason),
    progress,
    progressStats: bounded.stats,
  };
}
