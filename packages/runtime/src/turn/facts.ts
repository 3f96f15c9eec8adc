import { type JsonValue, LIMITS } from "@openworker/tools-sdk";
import { gatherModelContext } from "@openworker/tools-sdk/execution";
import type { NativeResolvedTool } from "@openworker/bundle-resolver";
import { messageOf } from "../describe.js";

/** The default: a hook slower than this contributes nothing, and is not called again in the session. */
export const MODEL_CONTEXT_BUDGET_MS = 5;

/** Why a tool contributed nothing to an attempt. */
export interface FactsDiagnostic {
  readonly alias: string;
  readonly reason: string;
}

/**
 * Gathers `modelContext` facts for one provider attempt (L1): selected native tools only,
 * 4 KB per tool, 16 KB in total, in selection order. A tool over its cap, throwing, async,
 * slower than `budgetMs` (the runtime option, default {@link MODEL_CONTEXT_BUDGET_MS}) or past the total contributes nothing, and a
 * diagnostic says why. A slow hook is remembered in `slow` and skipped for the rest of the
 * session, so later attempts never wait on it again. Facts are never journaled (L2).
 */
export function gatherFacts(
  tools: readonly NativeResolvedTool[],
  sessionId: string,
  slow: Set<string>,
  budgetMs: number,
): { facts: Record<string, JsonValue>; diagnostics: FactsDiagnostic[] } {
  const facts: Record<string, JsonValue> = {};
  const diagnostics: FactsDiagnostic[] = [];
  let total = 0;
  for (const resolved of tools) {
    if (!hasModelContext(resolved)) continue;
    if (slow.has(resolved.alias)) {
      diagnostics.push({ alias: resolved.alias, reason: "skipped: an earlier modelContext call was too slow" });
      continue;
    }
    const started = performance.now();
    let gathered: ReturnType<typeof gatherModelContext>;
    try {
      gathered = gatherModelContext(resolved.tool, sessionId);
    } catch (error) {
      // The SDK turns a hook's failures into reasons; this is the net for what escapes it.
      gathered = { ok: false, reason: `modelContext failed: ${messageOf(error)}` };
    }
    const elapsed = performance.now() - started;
    if (elapsed > budgetMs) {
      slow.add(resolved.alias);
      diagnostics.push({
        alias: resolved.alias,
        reason: `modelContext took ${elapsed.toFixed(1)} ms (budget ${budgetMs} ms); it must be synchronous and do no I/O`,
      });
      continue;
    }
    if (!gathered.ok) {
      if (gathered.reason !== "no facts") diagnostics.push({ alias: resolved.alias, reason: gathered.reason });
      continue;
    }
    if (total + gathered.bytes > LIMITS.modelContextTotalBytes) {
      diagnostics.push({
        alias: resolved.alias,
        reason: `facts would bring the attempt to ${total + gathered.bytes} bytes; the total limit is ${LIMITS.modelContextTotalBytes}`,
      });
      continue;
    }
    total += gathered.bytes;
    facts[resolved.alias] = gathered.facts;
  }
  return { facts, diagnostics };
}

/** Whether the tool has a hook; a `modelContext` getter that throws counts as none (L1: it never blocks an attempt). */
function hasModelContext(resolved: NativeResolvedTool): boolean {
  try {
    return typeof resolved.tool.modelContext === "function";
  } catch {
    return false;
  }
}
