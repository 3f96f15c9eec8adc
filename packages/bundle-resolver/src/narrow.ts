import type { BundleSelection } from "./tools-json.js";

/**
 * The selection without the tools of some MCP provider namespaces: what is left to
 * resolve when those providers are down this turn (or deliberately not started). Native
 * names are never removed. Nothing is renamed or replaced (N7): the removed tools are
 * simply not shown.
 *
 * @example
 * ```ts
 * withoutProviders({ version: 3, tools: ["example.web_search", "acer.battery"] }, new Set(["acer"]));
 * // { version: 3, tools: ["example.web_search"] }
 * ```
 */
export function withoutProviders(selection: BundleSelection, namespaces: ReadonlySet<string>): BundleSelection {
  if (namespaces.size === 0) return selection;
  switch (selection.version) {
    case 3:
      return { version: 3, tools: selection.tools.filter((name) => !namespaces.has(name.slice(0, name.indexOf(".")))) };
    case 2: {
      // Same shape as parseToolsJson's: no prototype, so every server name is an own key.
      const mcpServers = Object.create(null) as Record<string, readonly string[]>;
      for (const [server, tools] of Object.entries(selection.mcpServers)) if (!namespaces.has(server)) mcpServers[server] = tools;
      return { version: 2, mcpServers };
    }
    case 1:
      return { version: 1, mcpServers: selection.mcpServers.filter((server) => !namespaces.has(server)) };
  }
}
