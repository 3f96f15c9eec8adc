import { defineTool, type Tool, ToolError } from "@openworker/tools-sdk";
import { Type } from "typebox";
import { searchOfflineIndex, type SearchHit } from "./offline-index.js";

/** How `example.web_search` finds results. */
export interface WebSearchOptions {
  /** Base URL of a SearXNG instance; defaults to `process.env.EXAMPLE_SEARXNG_URL`. Unset: offline index. */
  readonly searxngUrl?: string;
}

const inputSchema = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 500, description: "What to search for." }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: "Results to return (default 5)." })),
  },
  { additionalProperties: false },
);

/**
 * Creates `example.web_search`. The result always says which source answered
 * (`"offline-index"` or `"searxng"`), so neither the model nor the user mistakes the
 * shipped sample index for the live web.
 */
export function createWebSearch(options: WebSearchOptions = {}): Tool {
  const endpoint = options.searxngUrl ?? process.env.EXAMPLE_SEARXNG_URL;
  return defineTool({
    name: "example.web_search",
    description: endpoint
      ? "Search the web and return titles, URLs and snippets."
      : "Search a small offline sample index (not the live web) and return titles, URLs and snippets.",
    version: "1.0.0",
    inputSchema,
    modelContext: () => ({ source: endpoint ? "searxng" : "offline-index" }),
    async call(args, context) {
      const limit = args.limit ?? 5;
      if (!endpoint) {
        const results = searchOfflineIndex(args.query, limit);
        return { json: { source: "offline-index", query: args.query, results } };
      }
      context.progress.report({ message: "querying the search endpoint" });
      const results = await searchSearxng(endpoint, args.query, limit, context.signal);
      return { json: { source: "searxng", query: args.query, results } };
    },
  });
}

async function searchSearxng(endpoint: string, query: string, limit: number, signal: AbortSignal): Promise<SearchHit[]> {
  const url = new URL("search", endpoint.endsWith("/") ? endpoint : `${endpoint}/`);
  url.searchParams.set("q", query);
  url.searchParams.set("format", "json");
  let response: Response;
  try {
    response = await fetch(url, { signal, headers: { accept: "application/json" } });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new ToolError("SEARCH_UNREACHABLE", `the search endpoint at ${url.origin} did not answer`);
  }
  if (!response.ok) throw new ToolError("SEARCH_FAILED", `the search endpoint answered HTTP ${response.status}`);
  let body: { results?: unknown };
  try {
    body = (await response.json()) as { results?: unknown };
  } catch (error) {
    if (signal.aborted) throw error;
    // An HTML captcha page, a cut-off body: the endpoint failed, the tool did not. The body is not echoed.
    throw new ToolError("SEARCH_FAILED", "the search endpoint's answer is not JSON (or was cut off)");
  }
  if (typeof body !== "object" || body === null || !Array.isArray(body.results))
    throw new ToolError("SEARCH_FAILED", "the search endpoint's answer has no results list");
  return body.results.slice(0, limit).map((hit: unknown) => {
    const fields = (typeof hit === "object" && hit !== null ? hit : {}) as { title?: unknown; url?: unknown; content?: unknown };
    return { title: text(fields.title), url: text(fields.url), snippet: text(fields.content).slice(0, 500) };
  });
}

/** A hit's field as text: strings and numbers as they are, anything else (an object, null) empty. */
function text(value: unknown): string {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
}
