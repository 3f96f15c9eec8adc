import { defineTool, LIMITS, type Tool, ToolError, utf8Bytes } from "@openworker/tools-sdk";
import { Type } from "typebox";
import type { Glossary } from "./glossary.js";

const inputSchema = Type.Object(
  {
    prefix: Type.String({ minLength: 1, maxLength: 80, description: "Start of the term, any letter case." }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: "Most entries to return (default 10)." })),
  },
  { additionalProperties: false },
);

/** `glossary.lookup`: the entries whose term starts with `prefix`. */
export function createLookupTool(glossary: Glossary): Tool {
  return defineTool({
    name: "glossary.lookup",
    description: "Look terms up in the team glossary. Returns the matching entries with their definitions.",
    version: "1.0.0",
    inputSchema,
    async call(args, context) {
      // args is typed { prefix: string; limit?: number } and already validated.
      context.progress.report({ message: `searching the glossary for "${args.prefix}"` });
      const entries = await glossary.search(args.prefix, context.signal);
      if (entries.length === 0) {
        return new ToolError("NO_MATCH", `no glossary term starts with "${args.prefix}"; try a shorter prefix`);
      }
      const shown = entries.slice(0, args.limit ?? 10);
      const result = { entries: shown, total: entries.length };
      // Past 256 KB the runtime stops the turn: answer with a recoverable error instead.
      if (utf8Bytes(JSON.stringify(result)) > LIMITS.resultBytes) {
        return new ToolError("TOO_LARGE", "the matching entries are too long to return; ask for fewer with `limit`");
      }
      return { json: result };
    },
  });
}
