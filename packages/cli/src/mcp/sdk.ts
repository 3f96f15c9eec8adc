import { OpenWorkerError } from "@openworker/tools-sdk";
import { CLI_ERROR_CODES } from "../cli/errors.js";

type ServerModule = typeof import("@modelcontextprotocol/server");
type StdioModule = typeof import("@modelcontextprotocol/server/stdio");
type NodeModule = typeof import("@modelcontextprotocol/node");

/** The parts of the MCP SDK (v2 server packages) `serve --mcp` uses. */
export interface McpSdk {
  readonly Server: ServerModule["Server"];
  readonly serveStdio: StdioModule["serveStdio"];
  readonly createMcpHandler: ServerModule["createMcpHandler"];
  readonly isLegacyRequest: ServerModule["isLegacyRequest"];
  readonly isInitializeRequest: ServerModule["isInitializeRequest"];
  readonly parseJSONRPCMessage: ServerModule["parseJSONRPCMessage"];
  readonly ProtocolError: ServerModule["ProtocolError"];
  readonly inputRequired: ServerModule["inputRequired"];
  readonly inputResponse: ServerModule["inputResponse"];
  readonly createRequestStateCodec: ServerModule["createRequestStateCodec"];
  readonly CLIENT_CAPABILITIES_META_KEY: ServerModule["CLIENT_CAPABILITIES_META_KEY"];
  readonly CLIENT_INFO_META_KEY: ServerModule["CLIENT_INFO_META_KEY"];
  readonly NodeStreamableHTTPServerTransport: NodeModule["NodeStreamableHTTPServerTransport"];
  readonly toNodeHandler: NodeModule["toNodeHandler"];
  readonly toWebRequest: NodeModule["toWebRequest"];
}

/** Loads the MCP SDK, only for `serve --mcp` (it is heavy). */
export async function loadMcpSdk(): Promise<McpSdk> {
  try {
    const [server, stdio, node] = await Promise.all([
      import("@modelcontextprotocol/server"),
      import("@modelcontextprotocol/server/stdio"),
      import("@modelcontextprotocol/node"),
    ]);
    return {
      Server: server.Server,
      serveStdio: stdio.serveStdio,
      createMcpHandler: server.createMcpHandler,
      isLegacyRequest: server.isLegacyRequest,
      isInitializeRequest: server.isInitializeRequest,
      parseJSONRPCMessage: server.parseJSONRPCMessage,
      ProtocolError: server.ProtocolError,
      inputRequired: server.inputRequired,
      inputResponse: server.inputResponse,
      createRequestStateCodec: server.createRequestStateCodec,
      CLIENT_CAPABILITIES_META_KEY: server.CLIENT_CAPABILITIES_META_KEY,
      CLIENT_INFO_META_KEY: server.CLIENT_INFO_META_KEY,
      NodeStreamableHTTPServerTransport: node.NodeStreamableHTTPServerTransport,
      toNodeHandler: node.toNodeHandler,
      toWebRequest: node.toWebRequest,
    };
  } catch (cause) {
    throw new OpenWorkerError(
      CLI_ERROR_CODES.MCP_SDK_MISSING,
      `serve --mcp could not load the MCP SDK, @modelcontextprotocol/server and @modelcontextprotocol/node (${(cause as Error).message})`,
      { cause },
    );
  }
}
