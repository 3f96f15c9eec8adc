import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsImport from "ajv-formats";
import { OpenWorkerError } from "../errors.js";
import type { JsonSchema } from "../json.js";
import { schemaFingerprint } from "./fingerprint.js";

/** One reason arguments do not match their schema. */
export interface ArgumentIssue {
  /** JSON Pointer into the arguments (`""` for the root). */
  readonly path: string;
  readonly message: string;
}

/** The result of checking arguments: ok, or a message the model can act on. */
export type ArgumentCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly message: string; readonly issues: readonly ArgumentIssue[] };

/** A compiled input schema. Compiled once per distinct schema in a process. */
export interface ArgumentValidator {
  /** `schemaFingerprint` of the schema it was compiled from. */
  readonly fingerprint: string;
  /** Checks arguments without changing them. */
  check(args: unknown): ArgumentCheck;
}

type FormatsPlugin = (ajv: Ajv) => Ajv;
// ajv-formats is CommonJS: its function sits at `.default` under ESM and CJS interop alike.
const addFormats = ((addFormatsImport as unknown as { default?: FormatsPlugin }).default ??
  addFormatsImport) as unknown as FormatsPlugin;

const AJV_OPTIONS = { strict: false, allErrors: true, allowUnionTypes: true } as const;

let drafts: { draft7: Ajv; draft2019: Ajv; draft2020: Ajv } | undefined;

function engines(): { draft7: Ajv; draft2019: Ajv; draft2020: Ajv } {
  if (!drafts) {
    drafts = {
      draft7: addFormats(new Ajv(AJV_OPTIONS)),
      draft2019: addFormats(new Ajv2019(AJV_OPTIONS) as unknown as Ajv),
      draft2020: addFormats(new Ajv2020(AJV_OPTIONS) as unknown as Ajv),
    };
  }
  return drafts;
}

function engineFor(schema: JsonSchema, toolName: string): Ajv {
  const dialect = schema.$schema;
  const { draft7, draft2019, draft2020 } = engines();
  if (dialect === undefined) {
    const undeclared = undeclaredDialect(schema);
    return undeclared === "2020-12" ? draft2020 : undeclared === "2019-09" ? draft2019 : draft7;
  }
  if (typeof dialect === "string") {
    if (/json-schema\.org\/draft-0[67]\/schema#?$/.test(dialect)) return draft7;
    if (/json-schema\.org\/draft\/2019-09\/schema#?$/.test(dialect)) return draft2019;
    if (/json-schema\.org\/draft\/2020-12\/schema#?$/.test(dialect)) return draft2020;
  }
  throw new OpenWorkerError(
    "SCHEMA_INVALID",
    `input schema of tool ${JSON.stringify(toolName)} declares $schema ${JSON.stringify(dialect)}; ` +
      "supported dialects are draft-07, 2019-09 and 2020-12 (or no $schema: draft-07, or 2020-12 when it uses keywords only 2020-12 has)",
    { details: { tool: toolName, $schema: dialect } },
  );
}

/** Keywords 2019-09 and 2020-12 share, which a draft-07 reader ignores. */
const KEYWORDS_2019_AND_2020 = new Set(["dependentRequired", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "minContains", "maxContains"]);
/** Keywords of 2020-12 only (`prefixItems` also changes what `items` means). */
const KEYWORDS_2020_ONLY = new Set(["prefixItems", "$dynamicRef", "$dynamicAnchor"]);
/** Keywords of 2019-09 only, which 2020-12 replaced (`$dynamicRef`). */
const KEYWORDS_2019_ONLY = new Set(["$recursiveRef", "$recursiveAnchor"]);
/** Keywords whose values are maps from names to schemas: their keys are names, not keywords. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
/** Keywords whose values are data, never schemas. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples", "required", "dependentRequired"]);

/**
 * The dialect of a schema that declares none. MCP's 2025-11-25 revision reads such a
 * schema as 2020-12, older revisions and most servers' generators (draft-07 with
 * `$schema`, or none) as draft-07. Read by what it uses: a schema with a keyword only
 * 2019-09/2020-12 know (`prefixItems`, `dependentRequired`, `unevaluatedProperties`, …)
 * and no draft-07-only form (`items` as an array, `additionalItems`, `dependencies`) is
 * 2020-12 (2019-09 when it uses `$recursiveRef`/`$recursiveAnchor`, which 2020-12
 * replaced); a schema mixing keywords only one of those has is read as draft-07, as every
 * other is, as before (the dialects read the common keywords alike).
 */
function undeclaredDialect(schema: JsonSchema): "draft-07" | "2019-09" | "2020-12" {
  let shared = false;
  let only2020 = false;
  let only2019 = false;
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) {
      pending.push(...node);
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    for (const [key, value] of Object.entries(node)) {
      if (key === "additionalItems" || key === "dependencies" || (key === "items" && Array.isArray(value))) return "draft-07";
      if (KEYWORDS_2019_AND_2020.has(key)) shared = true;
      else if (KEYWORDS_2020_ONLY.has(key)) only2020 = true;
      else if (KEYWORDS_2019_ONLY.has(key)) only2019 = true;
      if (DATA_KEYWORDS.has(key)) continue;
      if (SCHEMA_MAPS.has(key) && typeof value === "object" && value !== null) pending.push(...Object.values(value));
      else pending.push(value);
    }
  }
  if (only2019 && only2020) return "draft-07";
  if (only2019) return "2019-09";
  return only2020 || shared ? "2020-12" : "draft-07";
}

const cache = new Map<string, ArgumentValidator>();
let compiled = 0;

/**
 * Compiles a tool's input schema with ajv (formats enabled) or returns the validator
 * already compiled for an identical schema: a schema is never compiled twice in a
 * process (B5). Throws an {@link OpenWorkerError} coded `SCHEMA_INVALID` naming the tool
 * when the schema is not valid JSON Schema.
 *
 * @example
 * ```ts
 * const validator = compileInputSchema({ type: "object", required: ["q"] }, "example.web_search");
 * validator.check({}); // { ok: false, message: "... must have required property 'q'", ... }
 * ```
 */
export function compileInputSchema(schema: JsonSchema, toolName = "(unnamed)"): ArgumentValidator {
  const fingerprint = schemaFingerprint(schema);
  const known = cache.get(fingerprint);
  if (known) return known;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema) || schema.type !== "object") {
    throw new OpenWorkerError(
      "SCHEMA_INVALID",
      `input schema of tool ${JSON.stringify(toolName)} must be an object schema ({"type":"object", ...})`,
      { details: { tool: toolName } },
    );
  }
  const engine = engineFor(schema, toolName);
  let validate: ValidateFunction;
  try {
    validate = engine.compile(schema as Record<string, unknown>);
  } catch (cause) {
    throw new OpenWorkerError(
      "SCHEMA_INVALID",
      `input schema of tool ${JSON.stringify(toolName)} is not valid JSON Schema: ${(cause as Error).message}`,
      { cause, details: { tool: toolName } },
    );
  }
  compiled++;
  const validator: ArgumentValidator = {
    fingerprint,
    check(args) {
      if (validate(args)) return { ok: true };
      const issues = (validate.errors ?? []).map(toIssue);
      const message = issues.map((issue) => `${issue.path || "(root)"} ${issue.message}`).join("; ");
      return { ok: false, message, issues };
    },
  };
  cache.set(fingerprint, validator);
  return validator;
}

/** How many distinct schemas this process has compiled (for benchmarks and tests of B5's cache). */
export function compiledSchemaCount(): number {
  return compiled;
}

function toIssue(error: ErrorObject): ArgumentIssue {
  const extra =
    error.keyword === "additionalProperties"
      ? ` (${JSON.stringify((error.params as { additionalProperty?: string }).additionalProperty)})`
      : "";
  return { path: error.instancePath, message: `${error.message ?? "is invalid"}${extra}` };
}
