import { redactArgs } from "@openworker/mcp-bridge/redact";
import type { ToolRegistry } from "@openworker/registry";

/**
 * Registers the providers of a servers.json (`--servers`) and warns, on stderr, about each
 * stdio server whose `args` carry credentials (E6): arguments show in process listings and
 * in what other tools print. `tools list` shows them masked; the warning says where they
 * belong.
 */
export async function loadServersFile(registry: ToolRegistry, file: string, warn: (text: string) => void): Promise<void> {
  const before = new Set(registry.providers().map((provider) => provider.namespace));
  await registry.loadServersFile(file);
  for (const provider of registry.providers()) {
    if (before.has(provider.namespace) || provider.transport !== "stdio") continue;
    const shown = redactArgs(provider.args);
    if (shown.every((arg, index) => arg === provider.args[index])) continue;
    warn(
      `warning: --servers ${file}: server "${provider.namespace}" passes credentials in "args" (${shown.filter((arg, index) => arg !== provider.args[index]).join(" ")}); ` +
        `move them to "env" (stdio) or "headers" (streamable_http): arguments show in process listings`,
    );
  }
}
