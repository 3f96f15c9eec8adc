const TOOL_ERROR = Symbol.for("openworker.tool-error");

/** A `ToolError` code: a short stable identifier such as `NOT_FOUND` or `RATE_LIMITED`. */
const CODE_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * True when `value` is a valid `ToolError` code: 1–64 characters of `A-Z a-z 0-9 _ . -`.
 * The constructor applies it, and the call boundary applies it again to a branded value
 * from another copy of the package (or a forged one) before trusting its `code`.
 */
export function isToolErrorCode(value: unknown): value is string {
  // The length test first: a 300,000-character string is refused without a regex run.
  return typeof value === "string" && value.length <= 64 && CODE_PATTERN.test(value);
}

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
    if (!isToolErrorCode(code)) {
      throw new TypeError(
        `ToolError code ${JSON.stringify(code)} must be 1-64 characters of A-Z a-z 0-9 _ . -; the code comes first, then the message: new ToolError("NOT_FOUND", "no note named x")`,
      );
    }
    super(message);
    this.code = code;
  }

  /**
   * True for any `ToolError`, whichever copy of the package made it. Never throws: a value
   * whose brand cannot be read (a Proxy whose trap throws) is no `ToolError`. The brand says
   * nothing about the fields; the call boundary still checks `code` and `message`.
   */
  static isInstance(value: unknown): value is ToolError {
    if (typeof value !== "object" || value === null) return false;
    try {
      return (value as Record<symbol, unknown>)[TOOL_ERROR] === true;
    } catch {
      return false;
    }
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
