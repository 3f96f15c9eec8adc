import { OpenWorkerError } from "@openworker/tools-sdk";
import { CLI_ERROR_CODES } from "../cli/errors.js";

type ServerModule = typeof import("@modelcontextprotocol/sdk/server/index.js");
type HttpModule = typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js");
type TypesModule = typeof import("@modelcontextprotocol/sdk/types.js");

/** The parts of the MCP SDK `serve --mcp` uses. */
export interface McpSdk {
  readonly Server: ServerModule["Server"];
  readonly StreamableHTTPServerTransport: HttpModule["StreamableHTTPServerTransport"];
  readonly ListToolsRequestSchema: TypesModule["ListToolsRequestSchema"];
  readonly CallToolRequestSchema: TypesModule["CallToolRequestSchema"];
  readonly isInitializeRequest: TypesModule["isInitializeRequest"];
  readonly JSONRPCMessageSchema: TypesModule["JSONRPCMessageSchema"];
}

/** Loads the MCP SDK, only for `serve --mcp` (it is heavy). */
export async function loadMcpSdk(): Promise<McpSdk> {
  try {
    const [server, http, types] = await Promise.all([
      import("@modelcontextprotocol/sdk/server/index.js"),
      import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
      import("@modelcontextprotocol/sdk/types.js"),
    ]);
    return {
      Server: server.Server,
      StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
      ListToolsRequestSchema: types.ListToolsRequestSchema,
      CallToolRequestSchema: types.CallToolRequestSchema,
      isInitializeRequest: types.isInitializeRequest,
      JSONRPCMessageSchema: types.JSONRPCMessageSchema,
    };
  } catch (cause) {
    throw new OpenWorkerError(CLI_ERROR_CODES.MCP_SDK_MISSING, `serve --mcp could not load @modelcontextprotocol/sdk (${(cause as Error).message})`, { cause });
  }
}
