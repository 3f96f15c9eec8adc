import type { JsonValue } from "../json.js";
import { LIMITS, utf8Bytes } from "../limits.js";
import type { Tool } from "../tool.js";

/** The facts one tool contributed to an attempt, or why it contributed nothing (L1). */
export type ModelContextFacts =
  | { readonly ok: true; readonly facts: JsonValue; readonly bytes: number }
  | { readonly ok: false; readonly reason: string };

/**
 * Calls a tool's `modelContext(sessionId)` hook under L1's rules for one tool: it must
 * return synchronously (a Promise contributes nothing), must not throw, must be JSON,
 * and must fit `LIMITS.modelContextToolBytes`. `undefined` from the hook, or a tool with
 * no hook, gives `{ ok: false, reason: "no facts" }`.
 *
 * @example
 * ```ts
 * const facts = gatherModelContext(tool, "session-1");
 * if (!facts.ok) console.warn(facts.reason);
 * ```
 */
export function gatherModelContext(tool: Tool, sessionId: string): ModelContextFacts {
  if (!tool.modelContext) return { ok: false, reason: "no facts" };
  let facts: unknown;
  try {
    facts = tool.modelContext(sessionId);
  } catch (error) {
    return { ok: false, reason: `modelContext threw: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (facts === undefined) return { ok: false, reason: "no facts" };
  if (typeof facts === "object" && facts !== null && typeof (facts as { then?: unknown }).then === "function") {
    // Swallow a late rejection; the facts themselves are ignored.
    (facts as Promise<unknown>).then(undefined, () => undefined);
    return { ok: false, reason: "modelContext returned a Promise; it must be synchronous" };
  }
  let serialized: string;
  try {
    serialized = JSON.stringify(facts);
  } catch (error) {
    return { ok: false, reason: `modelContext facts are not JSON: ${(error as Error).message}` };
  }
  const bytes = utf8Bytes(serialized);
  if (bytes > LIMITS.modelContextToolBytes) {
    return { ok: false, reason: `modelContext facts are ${bytes} bytes; the limit is ${LIMITS.modelContextToolBytes}` };
  }
  return { ok: true, facts: JSON.parse(serialized) as JsonValue, bytes };
}
