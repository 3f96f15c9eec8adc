import type { ProgressEvent, ToolContext } from "../context.js";
import { createBoundedProgress, type ProgressStats } from "../execution/progress.js";

/** Ids and workspace for a test context; every field has a default. */
export interface TestContextOptions {
  readonly sessionId?: string;
  readonly turnId?: string;
  readonly callId?: string;
  readonly workspace?: string;
}

/** A `ToolContext` you control: abort it, read the progress it captured. */
export interface TestContext {
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
 * bounded progress reporter the runtime uses (E2) and a controllable abort.
 *
 * @example
 * ```ts
 * const test = createTestContext();
 * const pending = tool.call(test.context, { seconds: 10 });
 * test.abort();
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
