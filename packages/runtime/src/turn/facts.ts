import { type JsonValue, LIMITS, utf8Bytes } from "@openworker/tools-sdk";
import { gatherModelContext } from "@openworker/tools-sdk/internal/execution";
import type { NativeResolvedTool } from "@openworker/bundle-resolver";
import { messageOf } from "../describe.js";

/** The default: a hook slower than this contributes nothing, and is not called again in the turn. */
export const MODEL_CONTEXT_BUDGET_MS = 5;

/**
 * Turns in a row in which a tool's hook was too slow before it is no longer called in the
 * session: one slow call (a collection pause, a busy machine) costs a tool its facts for
 * the rest of that turn only, while a hook that blocks every turn stops costing each one.
 */
export const SLOW_TURNS_BEFORE_DROPPED = 3;

/**
 * What a session remembers of slow hooks: the aliases too slow in the running turn
 * (`turn`, cleared by {@link newFactsTurn}), and for each alias the turns in a row it was
 * slow in (`slowTurns`; a timely call clears it).
 */
export interface SlowHooks {
  readonly turn: Set<string>;
  readonly slowTurns: Map<string, number>;
}

/** Starts a turn: hooks too slow in the turn before are called again (unless dropped for the session). */
export function newFactsTurn(slow: SlowHooks): void {
  slow.turn.clear();
}

/** Why a tool contributed nothing to an attempt. */
export interface FactsDiagnostic {
  readonly alias: string;
  readonly reason: string;
}

/**
 * Gathers `modelContext` facts for one provider attempt (L1): selected native tools only,
 * 4 KB per tool, 16 KB in total, in selection order. A tool over its cap, throwing, async,
 * slower than `budgetMs` (the runtime option, default {@link MODEL_CONTEXT_BUDGET_MS}) or past the total contributes nothing, and a
 * diagnostic says why. Facts are refreshed on every attempt; a slow hook (it is synchronous:
 * the runtime cannot stop it) is remembered in `slow` and skipped for the rest of its turn,
 * and for the rest of the session once it was slow in {@link SLOW_TURNS_BEFORE_DROPPED}
 * turns in a row. `redact` masks the session's secrets (E6): facts reach the model as a
 * tool result does. Facts are never journaled (L2).
 */
export function gatherFacts(
  tools: readonly NativeResolvedTool[],
  sessionId: string,
  slow: SlowHooks,
  budgetMs: number,
  redact: (value: JsonValue) => JsonValue,
): { facts: Record<string, JsonValue>; diagnostics: FactsDiagnostic[] } {
  const facts: Record<string, JsonValue> = {};
  const diagnostics: FactsDiagnostic[] = [];
  let total = 0;
  for (const resolved of tools) {
    if (!hasModelContext(resolved)) continue;
    const slowTurns = slow.slowTurns.get(resolved.alias) ?? 0;
    if (slowTurns >= SLOW_TURNS_BEFORE_DROPPED) {
      diagnostics.push({ alias: resolved.alias, reason: `skipped for this session: modelContext was too slow in ${slowTurns} turns in a row` });
      continue;
    }
    if (slow.turn.has(resolved.alias)) {
      diagnostics.push({ alias: resolved.alias, reason: "skipped for this turn: an earlier modelContext call in it was too slow" });
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
      slow.turn.add(resolved.alias);
      slow.slowTurns.set(resolved.alias, slowTurns + 1);
      diagnostics.push({
        alias: resolved.alias,
        reason: `modelContext took ${elapsed.toFixed(1)} ms (budget ${budgetMs} ms); it must be synchronous and do no I/O`,
      });
      continue;
    }
    slow.slowTurns.delete(resolved.alias);
    if (!gathered.ok) {
      if (gathered.reason !== "no facts") diagnostics.push({ alias: resolved.alias, reason: gathered.reason });
      continue;
    }
    const redacted = redact(gathered.facts);
    // The mask may be longer than what it hides: masked facts are measured again.
    const bytes = redacted === gathered.facts ? gathered.bytes : utf8Bytes(JSON.stringify(redacted));
    if (bytes > LIMITS.modelContextToolBytes) {
      diagnostics.push({
        alias: resolved.alias,
        reason: `modelContext facts are ${bytes} bytes once secrets are masked; the limit is ${LIMITS.modelContextToolBytes}`,
      });
      continue;
    }
    if (total + bytes > LIMITS.modelContextTotalBytes) {
      diagnostics.push({
        alias: resolved.alias,
        reason: `facts would bring the attempt to ${total + bytes} bytes; the total limit is ${LIMITS.modelContextTotalBytes}`,
      });
      continue;
    }
    total += bytes;
    facts[resolved.alias] = redacted;
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
