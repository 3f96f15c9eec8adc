// Anything exported here is public API of @openworker/mcp-bridge.
export {};
