import type { ResolvedTool } from "@openworker/bundle-resolver";
import type { CallReport, Session } from "@openworker/runtime";
import type { JsonValue } from "@openworker/tools-sdk";
import { CLI_VERSION } from "../cli/version.js";
import type { McpSdk } from "./sdk.js";

/** What the MCP server says about itself in `initialize`: this package's name and version. */
export const MCP_SERVER_INFO = Object.freeze({ name: "openworker", version: CLI_VERSION });

/**
 * One MCP server over the bundle's selected tools. `tools/list` shows exactly the
 * selection (B2), by model alias (N2: MCP clients hand names to models) with the
 * qualified name as title; every `tools/call` goes through `session.callTool`, the same
 * governed pipeline as a model's call: schema validation (E5), the policy and approver
 * (A1), the journal (A3) and the limits (E1-E3). A failure is an `isError` result that
 * names its code; nothing bypasses the pipeline. `calls` is told when each call starts and
 * ends (its approval included): a call outlives the request that asked for it when the
 * client stops listening, and an HTTP session must not expire under it. The same server
 * answers every protocol era: the SDK's serving entries speak the era, not the handlers.
 */
export function createToolServer(sdk: McpSdk, tools: readonly ResolvedTool[], session: () => Promise<Session>, calls?: { begin(): void; end(): void }) {
  const server = new sdk.Server(MCP_SERVER_INFO, { capabilities: { tools: {} } });
  const byAlias = new Map(tools.map((tool) => [tool.alias, tool]));
  server.setRequestHandler("tools/list", () => ({
    tools: tools.map((tool) => ({
      name: tool.alias,
      title: tool.qualifiedName,
      description: tool.descriptor.description,
      inputSchema: tool.descriptor.inputSchema as { type: "object"; [key: string]: unknown },
    })),
  }));
  server.setRequestHandler("tools/call", async (request, context) => {
    const tool = byAlias.get(request.params.name);
    if (!tool) {
      return {
        isError: true,
        content: [{ type: "text" as const, text: `Error UNKNOWN_TOOL: no served tool is named ${JSON.stringify(request.params.name)}; use tools/list` }],
      };
    }
    calls?.begin();
    let report: CallReport;
    try {
      report = await (await session()).callTool(tool.qualifiedName, (request.params.arguments ?? {}) as JsonValue, { signal: context.mcpReq.signal });
    } finally {
      calls?.end();
    }
    const structured = report.outcome === "succeeded" && isRecord(report.json) ? { structuredContent: report.json } : {};
    return { isError: report.isError, content: [{ type: "text" as const, text: report.modelText }], ...structured };
  });
  return server;
}

function isRecord(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
