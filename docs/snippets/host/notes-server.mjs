// A minimal MCP server over stdio, written with the official SDK: one read-only tool.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "notes", version: "1.0.0" });
server.registerTool(
  "list_notes",
  { description: "List the team's pinned notes.", inputSchema: {}, annotations: { readOnlyHint: true } },
  async () => ({ content: [{ type: "text", text: "1. Ship the glossary tools on Friday." }] }),
);
await server.connect(new StdioServerTransport());
