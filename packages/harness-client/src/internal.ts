// Internal: @openworker/harness-client/internal is for the OpenWorker packages themselves
// (the CLI's harness side and its MCP stdio transport), with no compatibility promise
// between minor versions. The JSON-RPC line protocol both sides of `serve --stdio` speak.
export { JsonRpcPeer, MAX_LINE_BYTES, readLines, rpcError, toWireError, type DroppedLine, type JsonRpcHandlers } from "./json-rpc.js";
