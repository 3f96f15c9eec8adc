import { createRequire } from "node:module";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { memoryGlossary, register as registerGlossaryTools } from "glossary-tools";

const terms = [
  { term: "alias", definition: "The name a model sees for a tool: its qualified name with every dot replaced by __." },
  { term: "bundle", definition: "A coworker: manifest.md (who it is) and tools.json (the tools it may use)." },
];

/**
 * Everything this host can run. It has no side effects until called, and every process of
 * the host calls it again at startup, the stdio harness child included (the re-exec rule).
 */
export function createRegistry(): ToolRegistry {
  const registry = new ToolRegistry();
  registerGlossaryTools(registry, { glossary: memoryGlossary(terms) });
  registry.registerMcp({
    namespace: "notes",
    program: process.execPath,
    args: [path.join(import.meta.dirname, "..", "notes-server.mjs")],
  });
  // A published MCP server, installed as one of the host's dependencies.
  registry.registerMcp({
    namespace: "memory",
    program: process.execPath,
    args: [createRequire(import.meta.url).resolve("@modelcontextprotocol/server-memory/dist/index.js")],
    env: { MEMORY_FILE_PATH: path.join(import.meta.dirname, "..", "memory.jsonl") },
  });
  return registry;
}
