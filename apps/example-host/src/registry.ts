import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ToolRegistry } from "@openworker/registry";
import { register as registerExampleTools } from "example-tools";
import { register as registerNotificationTools } from "notification-tools";

/**
 * The repository's `examples/acer-mcp/bin/acer-mcp-launcher`, found from this file
 * (`apps/example-host/dist/host.js` once built, `src/registry.ts` in tests), so the host
 * works from any clone and any current folder.
 */
export function acerLauncherPath(from: string = fileURLToPath(import.meta.url)): string {
  let dir = path.dirname(from);
  for (;;) {
    const candidate = path.join(dir, "examples", "acer-mcp", "bin", "acer-mcp-launcher");
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(path.dirname(from), "../../../examples/acer-mcp/bin/acer-mcp-launcher");
    dir = parent;
  }
}

/**
 * The seed's custom host registry: the partner packages register their native tools,
 * then the `acer` MCP provider is registered through its launcher. Nothing is visible
 * to a model until a bundle selects it.
 *
 * @example
 * ```ts
 * const registry = createHostRegistry();
 * registry.natives().map((tool) => tool.name); // ["example.web_search", "notification.notify"]
 * ```
 */
export function createHostRegistry(): ToolRegistry {
  const registry = new ToolRegistry();
  registerExampleTools(registry);
  registerNotificationTools(registry);
  registry.registerMcp({ namespace: "acer", program: acerLauncherPath(), args: [] });
  return registry;
}
