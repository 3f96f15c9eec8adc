import type { CommandSpec } from "../cli/command.js";
import { usageError } from "../cli/errors.js";

/** `serve`: the harness as a process (`--stdio`) or the bundle's tools as an MCP server (`--mcp`). */
export const serveCommand: CommandSpec = {
  words: ["serve"],
  summary: "Serve the harness over stdio JSON-RPC (--stdio), or a bundle's tools as an MCP server (--mcp)",
  usage: "--stdio | --mcp --bundle DIR [--http PORT]",
  positionals: { min: 0, max: 0 },
  options: {},
  async run() {
    throw usageError("serve is not built yet");
  },
};
