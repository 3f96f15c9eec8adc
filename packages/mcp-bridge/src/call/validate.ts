import { specTypeSchemas, type CallToolResult } from "@modelcontextprotocol/client";
import type { JsonSchema } from "@openworker/tools-sdk";
import { compileInputSchema, type ArgumentValidator } from "@openworker/tools-sdk/internal/validation";

/** A `tools/call` result checked against the MCP schema, or what is wrong with it. */
export type ParsedCallResult = { readonly ok: true; readonly result: CallToolResult } | { readonly ok: false; readonly problem: string };

/**
 * Validates a `tools/call` result as the SDK's `Client` does (its `CallToolResult` schema).
 * The common answer (text blocks, optional `structuredContent` and `isError`) is
 * recognized by a direct check that accepts nothing the schema refuses and needs no
 * copy; anything else (images, resources, annotations, `_meta`, extra keys, and every
 * malformed result) goes through the SDK's schema itself, whose output (unknown keys
 * stripped) is what the bridge then normalizes.
 */
export function parseCallToolResult(value: unknown): ParsedCallResult {
  if (isPlainTextResult(value)) return { ok: true, result: value };
  const checked = CALL_TOOL_RESULT.validate(value);
  // The SDK's schemas are zod's, which validate synchronously.
  if (checked instanceof Promise) throw new TypeError("the MCP SDK's CallToolResult schema validates asynchronously");
  if (checked.issues === undefined) return { ok: true, result: checked.value as CallToolResult };
  const problems = checked.issues
    .slice(0, 5)
    .map((issue) => `${issue.path !== undefined && issue.path.length > 0 ? issue.path.map(pathKey).join(".") : "the result"}: ${issue.message}`);
  return { ok: false, problem: problems.join("; ") + (checked.issues.length > 5 ? `; … (${checked.issues.length} problems)` : "") };
}

const CALL_TOOL_RESULT = specTypeSchemas.CallToolResult["~standard"];

function pathKey(segment: PropertyKey | { readonly key: PropertyKey }): string {
  return String(typeof segment === "object" ? segment.key : segment);
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

/**
 * A tool's `outputSchema`, as the SDK's `Client.callTool` enforces it: a result that is not
 * an error must carry `structuredContent`, and it must match the schema. Compiled at most
 * once per catalog entry, at the tool's first call rather than at discovery (a catalog of
 * thousands of tools is not compiled for the few a bundle calls), with the same ajv
 * compiler the runtime uses for input schemas, which also shares one compiled validator
 * per distinct schema across the process.
 */
export class OutputContract {
  private validator: ArgumentValidator | undefined;
  private problem: string | undefined;

  /** `fingerprint` is the catalog entry's: a rediscovered, unchanged tool keeps its contract. */
  constructor(
    readonly schema: JsonSchema,
    readonly fingerprint: string,
  ) {}

  /** Compiles the schema the first time; then undefined when it is usable, or why it is not. */
  compile(): string | undefined {
    if (this.validator === undefined && this.problem === undefined) {
      try {
        this.validator = compileInputSchema(this.schema, "outputSchema");
      } catch (error) {
        const cause = (error as { cause?: unknown }).cause;
        // The compiler speaks of input schemas: its own words about this one, without that prefix.
        const why = (cause instanceof Error ? cause.message : (error as Error).message).replace(/^input schema of tool "outputSchema" /, "");
        this.problem = `its outputSchema is not a usable JSON Schema (${why})`;
      }
    }
    return this.problem;
  }

  /** What is wrong with a result under this contract, or undefined; after a `compile()` that returned undefined. */
  check(result: CallToolResult): string | undefined {
    // An error result is the tool's failure either way: the model is told that.
    if (result.isError === true) return undefined;
    const structured = result.structuredContent;
    if (structured === undefined) return "returned no structuredContent, which its outputSchema requires";
    const verdict = (this.validator as ArgumentValidator).check(structured);
    if (verdict.ok) return undefined;
    const shown = verdict.issues.slice(0, 3).map((issue) => `/structuredContent${issue.path} ${issue.message}`);
    const more = verdict.issues.length > 3 ? `; … (${verdict.issues.length} problems)` : "";
    return `returned structuredContent that does not match its outputSchema: ${shown.join("; ")}${more}`;
  }
}
