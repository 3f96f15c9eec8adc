import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.base.js";

export default defineConfig({
  ...packageBuild({ index: "src/index.ts" }),
  // `serve --mcp` loads the MCP SDK lazily; a host bundle includes it, a plain install resolves it.
  external: [/^@modelcontextprotocol\//],
});
