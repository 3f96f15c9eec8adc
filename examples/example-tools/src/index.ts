// The example partner package: everything a host needs is `register`.
import type { ToolRegistrar } from "@openworker/tools-sdk";
import { createWebSearch, type WebSearchOptions } from "./web-search.js";

export { createWebSearch, type WebSearchOptions } from "./web-search.js";
export { searchOfflineIndex, type SearchHit } from "./offline-index.js";

/**
 * Registers `example.web_search`. With no options it searches the small index shipped
 * in this package (offline); set `searxngUrl` (or `EXAMPLE_SEARXNG_URL`) to search a
 * real SearXNG instance instead.
 */
export function register(registry: ToolRegistrar, options: WebSearchOptions = {}): void {
  registry.register(createWebSearch(options));
}
