import type { McpProviderStartEvent } from "@openworker/mcp-bridge";

/** How long a provider may take to start before the CLI says what it waits for. */
export const PROVIDER_PROGRESS_DELAY_MS = 1_000;

/**
 * The bridge's `onProviderStart` listener for the CLI: a provider still starting after
 * `delayMs` gets one line on stderr, `starting MCP provider "big" (npx -y …)…`, so a slow
 * first start (a cold `npx` download) does not look like a hang. Providers that start
 * quickly print nothing, and each namespace is announced at most once per command.
 *
 * @example
 * ```ts
 * const onProviderStart = providerProgress((line) => process.stderr.write(`${line}\n`));
 * ```
 */
export function providerProgress(note: (text: string) => void, delayMs = PROVIDER_PROGRESS_DELAY_MS): (event: McpProviderStartEvent) => void {
  const waiting = new Map<string, NodeJS.Timeout>();
  const announced = new Set<string>();
  return (event) => {
    const { namespace } = event;
    if (event.phase !== "connecting") {
      clearTimeout(waiting.get(namespace));
      waiting.delete(namespace);
      return;
    }
    if (announced.has(namespace) || waiting.has(namespace)) return;
    const timer = setTimeout(() => {
      waiting.delete(namespace);
      announced.add(namespace);
      note(`starting MCP provider ${JSON.stringify(namespace)} (${event.launch})…`);
    }, delayMs);
    // A start still pending never keeps the command alive on its own.
    timer.unref();
    waiting.set(namespace, timer);
  };
}
