const TOOL_ERROR = Symbol.for("openworker.tool-error");

/** A `ToolError` code: a short stable identifier such as `NOT_FOUND` or `RATE_LIMITED`. */
const CODE_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * An expected, recoverable failure of a tool call (T1). It goes back to the model as a
 * failed call and the turn continues. A tool may either **return** it or **throw** it;
 * the runtime treats both the same. Anything else a tool throws is a crash: the runtime
 * records it and stops the turn (E4).
 *
 * Reserve `ToolError` for failures your implementation can describe honestly (the file
 * does not exist, the service said no). Never put secrets in `message`.
 *
 * @example
 * ```ts
 * return new ToolError("NOT_FOUND", `no note named "${args.title}"`);
 * ```
 */
export class ToolError extends Error {
  readonly [TOOL_ERROR] = true;
  override readonly name: string = "ToolError";
  /** Stable code, 1–64 characters of `A-Z a-z 0-9 _ . -`. */
  readonly code: string;

  constructor(code: string, message: string) {
    if (!CODE_PATTERN.test(code)) {
      throw new TypeError(`ToolError code ${JSON.stringify(code)} must be 1-64 characters of A-Z a-z 0-9 _ . -`);
    }
    super(message);
    this.code = code;
  }

  /** True for any `ToolError`, whichever copy of the package made it. */
  static isInstance(value: unknown): value is ToolError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[TOOL_ERROR] === true;
  }
}

/**
 * Shorthand for `new ToolError(code, message)`, for tools that return their failures.
 *
 * @example
 * ```ts
 * if (!found) return toolError("NOT_FOUND", "no such note");
 * ```
 */
export function toolError(code: string, message: string): ToolError {
  return new ToolError(code, message);
}
