import type { PublishedIcon, ResolvedTool } from "@openworker/bundle-resolver";
import type { Session } from "@openworker/runtime";

/**
 * Which names `serve --mcp` gives its tools: `alias`, the model aliases (`acer__battery_get`,
 * unique by N6, what many clients and models accept); or `published`, each MCP tool under
 * the name its provider publishes and each native tool under its qualified name, so that
 * `serve --mcp` can stand in for the provider itself. Published names that two selected
 * tools share are served under their aliases instead.
 */
export type ToolNames = "alias" | "published";

/** One tool as `tools/list` gives it (MCP `Tool`). */
export interface ListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: { readonly type: "object"; readonly [key: string]: unknown };
  readonly outputSchema?: { readonly type: "object"; readonly [key: string]: unknown };
  readonly annotations?: { readonly [key: string]: unknown };
  readonly icons?: readonly PublishedIcon[];
  readonly _meta: { readonly "openworker/qualifiedName": string };
}

/**
 * What `serve --mcp` serves now: the selected tools under their served names, with their
 * published metadata (M11), for one OpenWorker session (or the shared session of
 * 2026-07-28 clients). It starts from the selection resolved at start and follows the
 * session's own selection: when a provider's catalog changes what is served, {@link update}
 * says so, and the server tells its clients (`notifications/tools/list_changed`).
 */
export class ServedCatalog {
  readonly #names: ToolNames;
  #listing: readonly ListedTool[] = [];
  #byName = new Map<string, ResolvedTool>();
  #key = "";

  constructor(tools: readonly ResolvedTool[], names: ToolNames) {
    this.#names = names;
    this.update(tools);
  }

  get listing(): readonly ListedTool[] {
    return this.#listing;
  }

  /** The served tool of this name, if any. */
  tool(name: string): ResolvedTool | undefined {
    return this.#byName.get(name);
  }

  /** Serves `tools` from now on; true when the listing differs from what was served. */
  update(tools: readonly ResolvedTool[]): boolean {
    const names = servedNames(tools, this.#names);
    const listing = tools.map((tool, index) => listed(tool, names[index]!));
    const key = JSON.stringify(listing);
    if (key === this.#key) return false;
    this.#key = key;
    this.#listing = Object.freeze(listing);
    this.#byName = new Map(tools.map((tool, index) => [names[index]!, tool]));
    return true;
  }

  /** Takes the session's latest selection, if it has one; true when what is served changed. */
  follow(session: Session): boolean {
    const selection = session.selection;
    return selection !== undefined && this.update(selection.tools);
  }
}

/** The served name of each tool, in order; a published name shared by two tools gives way to the aliases. */
function servedNames(tools: readonly ResolvedTool[], names: ToolNames): string[] {
  if (names === "alias") return tools.map((tool) => tool.alias);
  const published = tools.map((tool) => (tool.kind === "mcp" ? tool.remoteName : tool.qualifiedName));
  const count = new Map<string, number>();
  for (const name of published) count.set(name, (count.get(name) ?? 0) + 1);
  const aliases = new Set(tools.map((tool) => tool.alias));
  // A published name that another tool's alias spells is shared too (`a__b` published by `x`).
  return tools.map((tool, index) =>
    count.get(published[index]!) === 1 && (!aliases.has(published[index]!) || published[index] === tool.alias) ? published[index]! : tool.alias,
  );
}

/**
 * A tool's listing entry: the selected description and input schema, and what the provider
 * publishes beside them (title, output schema, annotations, icons); a native tool's
 * descriptor has none of those. Its qualified name is in `_meta`.
 */
function listed(tool: ResolvedTool, name: string): ListedTool {
  const entry: { -readonly [K in keyof ListedTool]: ListedTool[K] } = {
    name,
    description: tool.descriptor.description,
    inputSchema: tool.descriptor.inputSchema as ListedTool["inputSchema"],
    _meta: { "openworker/qualifiedName": tool.qualifiedName },
  };
  if (tool.kind === "mcp") {
    const { title, outputSchema, annotations, icons } = tool.published;
    if (title !== undefined) entry.title = title;
    if (outputSchema !== undefined) entry.outputSchema = outputSchema as ListedTool["outputSchema"];
    if (annotations !== null && typeof annotations === "object" && !Array.isArray(annotations)) entry.annotations = annotations;
    if (icons !== undefined && icons.length > 0) entry.icons = icons;
  }
  return entry;
}

/** How often an open session is asked whether a provider announced a change to its tools. */
export const CATALOG_CHECK_MS = 1_000;

/**
 * Watches one session for catalog changes its providers announce (M3): when one did, the
 * session discovers again (`prepare`), and `changed` is told when what is served differs.
 * Asking is a flag read per provider, once a second; the timer is unref'd. Returns the stop.
 */
export function watchCatalog(session: () => Session | undefined, catalog: ServedCatalog, changed: () => void): () => void {
  let preparing = false;
  const timer = setInterval(() => {
    const current = session();
    if (current === undefined || preparing || !current.catalogChanged()) return;
    preparing = true;
    current
      .prepare()
      .then(
        () => {
          if (catalog.follow(current)) changed();
        },
        // A provider that cannot be listed now is listed again at the next call (M2).
        () => undefined,
      )
      .finally(() => {
        preparing = false;
      });
  }, CATALOG_CHECK_MS).unref();
  return () => clearInterval(timer);
}
