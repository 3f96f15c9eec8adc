import { OpenWorkerError } from "./errors.js";
import type { JsonSchema } from "./json.js";
import { validateQualifiedName } from "./names.js";

/**
 * What a tool says about itself (T1). The runtime reads it once, when the registry is
 * frozen; keep `version` accurate, because approvals are bound to it (A2).
 *
 * @example
 * ```ts
 * const descriptor: ToolDescriptor = {
 *   name: "example.web_search",
 *   description: "Search the web.",
 *   inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
 *   version: "1.2.0",
 * };
 * ```
 */
export interface ToolDescriptor {
  /** Qualified name, `namespace.tool` (N1). */
  readonly name: string;
  /** What the tool does, written for the model. */
  readonly description: string;
  /** JSON Schema of the arguments; must be an object schema. */
  readonly inputSchema: JsonSchema;
  /** Implementation version; change it whenever behaviour changes. */
  readonly version: string;
}

/**
 * Checks the shape of a descriptor and its name rules, naming the field at fault.
 * Throws an {@link OpenWorkerError} coded `DESCRIPTOR_INVALID` (or a name code from
 * {@link validateQualifiedName}). Schema compilation is checked later, at resolution.
 *
 * @example
 * ```ts
 * checkDescriptor(tool.descriptor());
 * ```
 */
export function checkDescriptor(descriptor: unknown): asserts descriptor is ToolDescriptor {
  if (typeof descriptor !== "object" || descriptor === null) {
    throw invalid("(unknown)", "descriptor() must return an object");
  }
  const { name, description, inputSchema, version } = descriptor as Record<string, unknown>;
  const label = typeof name === "string" ? name : "(unnamed)";
  if (typeof name !== "string") throw invalid(label, `field "name" must be a string, got ${typeOf(name)}`);
  validateQualifiedName(name);
  if (typeof description !== "string") {
    throw invalid(label, `field "description" must be a string, got ${typeOf(description)}`);
  }
  if (typeof version !== "string" || version.trim().length === 0) {
    throw invalid(label, `field "version" must be a non-empty string such as "1.0.0", got ${typeOf(version)}`);
  }
  if (typeof inputSchema !== "object" || inputSchema === null || Array.isArray(inputSchema)) {
    throw invalid(label, `field "inputSchema" must be a JSON Schema object, got ${typeOf(inputSchema)}`);
  }
  if ((inputSchema as Record<string, unknown>).type !== "object") {
    throw invalid(label, `field "inputSchema" must be an object schema ({"type":"object", ...})`);
  }
}

function invalid(name: string, problem: string): OpenWorkerError {
  return new OpenWorkerError("DESCRIPTOR_INVALID", `tool ${JSON.stringify(name)}: ${problem}`, {
    details: { name },
  });
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
