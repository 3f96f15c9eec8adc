import type { SearchHit } from "./offline-index.js";

/** The small index shipped with the package, searched when no endpoint is configured. */
export const OFFLINE_DOCUMENTS: readonly SearchHit[] = [
  {
    title: "Model Context Protocol",
    url: "https://modelcontextprotocol.io",
    snippet: "An open protocol that connects AI applications to tools and data sources over stdio or streamable HTTP.",
  },
  {
    title: "JSON Schema",
    url: "https://json-schema.org",
    snippet: "A vocabulary to annotate and validate JSON documents; tool input schemas are JSON Schema objects.",
  },
  { title: "TypeBox", url: "https://github.com/sinclairzx81/typebox", snippet: "JSON Schema type builder with static type resolution for TypeScript." },
  {
    title: "SQLite write-ahead logging",
    url: "https://sqlite.org/wal.html",
    snippet: "WAL mode lets readers run concurrently with a writer; commits append to the log and checkpoints move pages back.",
  },
  {
    title: "Node.js child processes",
    url: "https://nodejs.org/api/child_process.html",
    snippet: "Spawn processes, detached process groups, signals and stdio pipes from Node.js.",
  },
  {
    title: "AbortController and AbortSignal",
    url: "https://developer.mozilla.org/docs/Web/API/AbortController",
    snippet: "Cooperative cancellation: pass a signal to an operation and abort it later.",
  },
  {
    title: "Battery status on Linux",
    url: "https://www.kernel.org/doc/html/latest/power/power_supply_class.html",
    snippet: "The power supply class exposes battery capacity and status under /sys/class/power_supply.",
  },
  {
    title: "Desktop notifications",
    url: "https://specifications.freedesktop.org/notification-spec/latest/",
    snippet: "The freedesktop notification specification, used by notify-send on Linux desktops.",
  },
  {
    title: "Changesets",
    url: "https://github.com/changesets/changesets",
    snippet: "Manage versioning and changelogs of packages in a monorepo with changeset files.",
  },
  { title: "pnpm workspaces", url: "https://pnpm.io/workspaces", snippet: "A monorepo of packages sharing one lockfile, linked with the workspace protocol." },
  { title: "SearXNG", url: "https://docs.searxng.org", snippet: "A free metasearch engine with a JSON search API: /search?q=...&format=json." },
  { title: "Weather in Paris", url: "https://example.com/weather/paris", snippet: "Sample document: mild and cloudy, a chance of rain in the afternoon." },
];
