import type { McpProviderDefinition } from "@openworker/registry";
import { providerBounds, type McpProviderStartEvent, type ResolvedOptions } from "./options.js";
import { describeStart } from "./launch-description.js";

/**
 * Tells the host's `onProviderStart` that a provider's start begins, and returns what tells
 * it how the start ended. Without a listener nothing is built. A listener that throws
 * never disturbs the start.
 */
export function announceStart(
  definition: McpProviderDefinition,
  options: ResolvedOptions,
  secrets: readonly string[],
): (phase: "connected" | "failed") => void {
  const listener = options.onProviderStart;
  if (listener === undefined) return () => {};
  const base = {
    namespace: definition.namespace,
    launch: describeStart(definition, secrets),
    connectTimeoutMs: providerBounds(definition, options).connectTimeoutMs,
  };
  const emit = (phase: McpProviderStartEvent["phase"]) => {
    try {
      listener(Object.freeze({ ...base, phase }));
    } catch {
      // The host's display failing is no reason for a provider to fail.
    }
  };
  emit("connecting");
  return emit;
}
