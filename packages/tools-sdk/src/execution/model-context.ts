import type { JsonValue } from "../json.js";
import { LIMITS, utf8Bytes } from "../limits.js";
import type { Tool } from "../tool.js";
import { boundErrorMessage } from "./normalize.js";
import { readThrown, typeWords } from "./describe.js";

/** The facts one tool contributed to an attempt, or why it contributed nothing (L1). */
export type ModelContextFacts = { readonly ok: true; readonly facts: JsonValue; readonly bytes: number } | { readonly ok: false; readonly reason: string };

/**
 * Calls a tool's `modelContext(sessionId)` hook under L1's rules for one tool: it must
 * return synchronously (a Promise contributes nothing), must not throw, must be JSON,
 * and must fit `LIMITS.modelContextToolBytes`. It returns `{ ok: true, facts, bytes }`
 * (`facts` the JSON copy, `bytes` its UTF-8 size) or `{ ok: false, reason }` (why the tool
 * contributes nothing: the runtime's diagnostic). `undefined` from the hook, or a tool with
 * no hook, gives `{ ok: false, reason: "no facts" }`. It never throws: a hook that cannot
 * be read, facts with no JSON form (a function, a Symbol), a `then` or a `toJSON` that
 * throws, or a Proxy all contribute nothing, with the reason. The facts returned are a
 * copy made from their JSON, so a getter cannot change them after the check.
 *
 * @example
 * ```ts
 * const gathered = gatherModelContext(tool, "test-session");
 * if (gathered.ok) expect(gathered.facts).toEqual({ unread: 3 });
 * else console.warn(gathered.reason); // e.g. "modelContext returned a Promise; it must be synchronous"
 * ```
 */
export function gatherModelContext(tool: Tool, sessionId: string): ModelContextFacts {
  let hook: unknown;
  try {
    hook = tool.modelContext;
  } catch (error) {
    return { ok: false, reason: boundErrorMessage(`reading modelContext threw: ${thrownText(error)}`) };
  }
  if (hook === undefined || hook === null) return { ok: false, reason: "no facts" };
  if (typeof hook !== "function") return { ok: false, reason: `modelContext is ${typeWords(hook)}, not a function` };
  let facts: unknown;
  try {
    facts = Reflect.apply(hook, tool, [sessionId]);
  } catch (error) {
    return { ok: false, reason: boundErrorMessage(`modelContext threw: ${thrownText(error)}`) };
  }
  if (facts === undefined) return { ok: false, reason: "no facts" };
  let serialized: string | undefined;
  try {
    if (isThenable(facts)) return { ok: false, reason: "modelContext returned a Promise; it must be synchronous" };
    serialized = JSON.stringify(facts);
  } catch (error) {
    return { ok: false, reason: boundErrorMessage(`modelContext facts are not JSON: ${thrownText(error)}`) };
  }
  if (serialized === undefined) {
    return { ok: false, reason: `modelContext facts are not JSON: ${typeWords(facts)} has no JSON form` };
  }
  const bytes = utf8Bytes(serialized);
  if (bytes > LIMITS.modelContextToolBytes) {
    return { ok: false, reason: `modelContext facts are ${bytes} bytes; the limit is ${LIMITS.modelContextToolBytes}` };
  }
  return { ok: true, facts: JSON.parse(serialized) as JsonValue, bytes };
}

/**
 * Whether facts are a Promise (or any thenable). Reads `then` once; may throw (a getter, a
 * Proxy trap), which the caller reports. A late rejection is swallowed: the facts are ignored.
 */
function isThenable(facts: unknown): boolean {
  if ((typeof facts !== "object" || facts === null) && typeof facts !== "function") return false;
  const then: unknown = (facts as { then?: unknown }).then;
  if (typeof then !== "function") return false;
  try {
    Reflect.apply(then, facts, [undefined, ignore]);
  } catch {
    // A `then` that throws when called: the facts are refused as a Promise all the same.
  }
  return true;
}

function ignore(): undefined {
  return undefined;
}

/** A thrown value's message (L1 diagnostics keep the message alone), never throwing. */
function thrownText(error: unknown): string {
  const parts = readThrown(error);
  if (parts !== undefined) return parts.message;
  return typeof error === "object" || typeof error === "function" ? `a non-Error value (${typeof error})` : String(error);
}
