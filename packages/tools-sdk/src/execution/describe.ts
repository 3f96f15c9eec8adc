/** The readable parts of a thrown `Error`, each a string. */
export interface ThrownError {
  readonly name: string;
  readonly message: string;
}

/**
 * Reads what a tool threw, for a message, and never throws itself: a tool's failure must
 * not become the SDK's. Returns `undefined` for a value that is not an `Error` (or whose
 * prototype cannot be read: a Proxy whose trap throws). For an `Error` it reads `name` and
 * `message` once each; one that is not a string, or whose getter throws, is described
 * instead of shown. Whatever such a getter threw is not read in turn: it is tool code too.
 *
 * @example
 * ```ts
 * readThrown(new RangeError("boom")); // { name: "RangeError", message: "boom" }
 * ```
 */
export function readThrown(error: unknown): ThrownError | undefined {
  try {
    if (!(error instanceof Error)) return undefined;
  } catch {
    return undefined;
  }
  let name: unknown;
  let message: unknown;
  try {
    name = error.name;
    message = error.message;
  } catch {
    return { name: typeof name === "string" ? name : "Error", message: "(its name or message could not be read)" };
  }
  return {
    name: typeof name === "string" ? name : "Error",
    message: typeof message === "string" ? message : `(its message is ${typeWords(message)}, not a string)`,
  };
}

/**
 * Describes what a tool threw in a few words, never throwing: `RangeError: boom` for an
 * `Error`, `a non-Error value (object)` otherwise (see {@link readThrown}).
 *
 * @example
 * ```ts
 * describeThrown(Symbol("x")); // "a non-Error value (symbol)"
 * ```
 */
export function describeThrown(error: unknown): string {
  const parts = readThrown(error);
  return parts === undefined ? `a non-Error value (${error === null ? "null" : typeof error})` : `${parts.name}: ${parts.message}`;
}

/**
 * The type of a value in words, for a message ("a bigint", "an object", "undefined"),
 * from `typeof` alone: nothing of the value is read.
 *
 * @example
 * ```ts
 * `the code is ${typeWords(42)}`; // "the code is a number"
 * ```
 */
export function typeWords(value: unknown): string {
  const type = value === null ? "null" : typeof value;
  if (type === "undefined" || type === "null") return type;
  return type === "object" ? "an object" : `a ${type}`;
}
