import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** A `tools/call` result checked against the MCP schema, or what is wrong with it. */
export type ParsedCallResult = { readonly ok: true; readonly result: CallToolResult } | { readonly ok: false; readonly problem: string };

/**
 * Validates a `tools/call` result as the SDK's `Client` does (`CallToolResultSchema`).
 * The common answer (text blocks, optional `structuredContent` and `isError`) is
 * recognized by a direct check that accepts nothing the schema refuses and needs no
 * copy; anything else (images, resources, annotations, `_meta`, extra keys, and every
 * malformed result) goes through the SDK's schema itself, whose output (unknown keys
 * stripped) is what the bridge then normalizes.
 */
export function parseCallToolResult(value: unknown): ParsedCallResult {
  if (isPlainTextResult(value)) return { ok: true, result: value };
  const parsed = CallToolResultSchema.safeParse(value);
  if (parsed.success) return { ok: true, result: parsed.data };
  const problems = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "the result"}: ${issue.message}`);
  return { ok: false, problem: problems.join("; ") + (parsed.error.issues.length > 5 ? `; … (${parsed.error.issues.length} problems)` : "") };
}

function isPlainTextResult(value: unknown): value is CallToolResult {
  if (!isPlainObject(value)) return false;
  const { content, structuredContent, isError, _meta } = value;
  if (_meta !== undefined || !Array.isArray(content)) return false;
  if (isError !== undefined && typeof isError !== "boolean") return false;
  if (structuredContent !== undefined && !isPlainObject(structuredContent)) return false;
  for (const block of content as unknown[]) {
    if (!isPlainObject(block) || block.type !== "text" || typeof block.text !== "string") return false;
    // Annotations and _meta have schemas of their own, and the schema strips unknown keys.
    for (const key in block) if (key !== "type" && key !== "text") return false;
  }
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
