import type { JsonValue } from "../json.js";
import { LIMITS, utf8Bytes } from "../limits.js";
import { clip } from "../text.js";

/** The largest arguments a call takes, in UTF-8 bytes of their JSON: the result bound (E3). */
export const MAX_ARGUMENT_BYTES = LIMITS.resultBytes;

/**
 * Arguments nested deeper than this are refused (`ARGUMENTS_INVALID`): the journal refuses
 * values deeper than 256 levels, and no tool schema needs this many.
 */
export const MAX_ARGUMENT_DEPTH = 128;

/** What a call's arguments are once read: the JSON value, or why there is none. */
export type ArgumentsReading =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly problem: string }
  | { readonly ok: false; readonly tooLarge: number }
  | { readonly ok: false; readonly tooDeep: true };

/**
 * Arguments a host passed as a value (`session.callTool`, the testing kit's `runTool`):
 * what is validated, journaled and handed to the tool is their JSON, parsed back, never
 * the caller's object. So `NaN` becomes `null` (and fails a `number` schema), a `Date` its
 * ISO text, a `toJSON` its result, a function or `undefined` field disappears, `undefined`
 * itself is `{}`, and the size bound measures what the tool gets. A value with no JSON
 * text (a BigInt, a cycle, a throwing getter) is a problem, not a throw.
 *
 * @example
 * ```ts
 * readHostArguments({ when: new Date(0) }); // { ok: true, value: { when: "1970-01-01T00:00:00.000Z" } }
 * ```
 */
export function readHostArguments(value: unknown): ArgumentsReading {
  if (value === undefined) return { ok: true, value: {} };
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    // Too deep for JSON.stringify's recursion (about 10,000 levels): the nesting is the problem.
    if (error instanceof RangeError && walksDeeperThan(value, MAX_ARGUMENT_DEPTH)) return { ok: false, tooDeep: true };
    return { ok: false, problem: clip(messageOf(error), 500) };
  }
  if (text === undefined) return { ok: false, problem: `a ${typeof value} has no JSON text` };
  const bytes = utf8Bytes(text);
  if (bytes > MAX_ARGUMENT_BYTES) return { ok: false, tooLarge: bytes };
  const json = JSON.parse(text) as JsonValue;
  return nestsDeeperThan(json, MAX_ARGUMENT_DEPTH) ? { ok: false, tooDeep: true } : { ok: true, value: json };
}

/**
 * Arguments as a model sends them: JSON text. `""` (or blank) is `{}`, what models send for
 * a tool without parameters; the size bound is checked before parsing.
 *
 * @example
 * ```ts
 * readArgumentsText('{"query":"mcp"}'); // { ok: true, value: { query: "mcp" } }
 * ```
 */
export function readArgumentsText(text: string): ArgumentsReading {
  // Cheap bound first: a string can never take more than 3 bytes per UTF-16 unit.
  if (text.length > MAX_ARGUMENT_BYTES / 3) {
    const bytes = utf8Bytes(text);
    if (bytes > MAX_ARGUMENT_BYTES) return { ok: false, tooLarge: bytes };
  }
  if (text.trim() === "") return { ok: true, value: {} };
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  return nestsDeeperThan(value, MAX_ARGUMENT_DEPTH) ? { ok: false, tooDeep: true } : { ok: true, value };
}

/**
 * The code and message of arguments that could not be read, as the runtime answers the
 * model and the testing kit reports them: `ARGUMENTS_TOO_LARGE` or `ARGUMENTS_INVALID`.
 *
 * @example
 * ```ts
 * argumentsFailure({ ok: false, tooLarge: 300_000 }); // { code: "ARGUMENTS_TOO_LARGE", message: "arguments are 300000 bytes; the limit is 262144" }
 * ```
 */
export function argumentsFailure(reading: Exclude<ArgumentsReading, { ok: true }>): { code: string; message: string } {
  if ("tooLarge" in reading) return { code: "ARGUMENTS_TOO_LARGE", message: `arguments are ${reading.tooLarge} bytes; the limit is ${MAX_ARGUMENT_BYTES}` };
  if ("tooDeep" in reading) return { code: "ARGUMENTS_INVALID", message: `arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels; send flatter arguments` };
  return { code: "ARGUMENTS_INVALID", message: `arguments are not JSON: ${reading.problem}` };
}

/** The message of arguments that do not match a tool's schema (`alias`: the name the model knows it by). */
export function schemaMismatchMessage(alias: string, problem: string): string {
  return `arguments do not match the input schema of ${alias}: ${problem}`;
}

/** Whether parsed JSON nests deeper than `max` arrays/objects; iterative, so any depth is safe to ask about. */
export function nestsDeeperThan(value: JsonValue, max: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: { value: object; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

/** {@link nestsDeeperThan} for a host's value, which is not JSON yet: a getter or proxy that throws ends the walk with `false`. */
function walksDeeperThan(value: unknown, max: number): boolean {
  try {
    return nestsDeeperThan(value as JsonValue, max);
  } catch {
    return false;
  }
}

/** What was thrown, as text; never throws (a getter of the host's value may throw too). */
function messageOf(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error);
  } catch {
    return "an error that could not be described";
  }
}
