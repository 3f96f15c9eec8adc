import type { CommandContext } from "../cli/command.js";
import { usageError } from "../cli/errors.js";

/** Serves the bundle's selected tools as an MCP server. */
export async function serveMcp(_context: CommandContext): Promise<number> {
  throw usageError("serve --mcp is not built yet");
}
