// A minimal MCP server over stdio, written with the official SDK: one read-only tool,
// served to clients of protocol 2026-07-28 and of the 2025 revisions alike.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

serveStdio(() => {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.registerTool(
    "list_notes",
    { description: "List the team's pinned notes.", annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: "text", text: "1. Ship the glossary tools on Friday." }] }),
  );
  return server;
});
