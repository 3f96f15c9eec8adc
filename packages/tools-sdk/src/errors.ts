const OPENWORKER_ERROR = Symbol.for("openworker.error");

/** Structured, machine-readable facts about an error (both sides of a conflict, a file, a field). */
export type ErrorDetails = Readonly<Record<string, unknown>>;

/**
 * The one error class of the OpenWorker host stack: a mistake of a host or partner
 * (registration, resolution, configuration) or a runtime fault. It carries a stable
 * string `code` (`NAME_TOO_LONG`, `ALIAS_COLLISION`, `TOOL_TIMEOUT`, …) and a message
 * that names the offending input and says what to do.
 *
 * Use {@link OpenWorkerError.isInstance} instead of `instanceof`: it also recognises
 * errors created by another copy of this package.
 *
 * @example
 * ```ts
 * try {
 *   validateQualifiedName("openworker.shell");
 * } catch (error) {
 *   if (OpenWorkerError.isInstance(error)) console.log(error.code); // "NAMESPACE_RESERVED"
 * }
 * ```
 */
export class OpenWorkerError extends Error {
  readonly [OPENWORKER_ERROR] = true;
  override readonly name: string = "OpenWorkerError";
  readonly code: string;
  readonly details: ErrorDetails;

  constructor(code: string, message: string, options: { cause?: unknown; details?: ErrorDetails } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
  }

  /** True for any `OpenWorkerError`, whichever copy of the package made it. */
  static isInstance(value: unknown): value is OpenWorkerError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[OPENWORKER_ERROR] === true;
  }

  /** True when `value` is an `OpenWorkerError` with this `code`. */
  static hasCode(value: unknown, code: string): value is OpenWorkerError {
    return OpenWorkerError.isInstance(value) && value.code === code;
  }
}
