import { Ajv, type Logger, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsImport from "ajv-formats";
import { OpenWorkerError } from "../errors.js";
import type { JsonSchema } from "../json.js";
import { clip } from "../text.js";
import { undeclaredDialect } from "./dialect.js";
import { schemaFingerprint } from "./fingerprint.js";
import { linearRegExp, UnsupportedPatternError } from "./linear-pattern.js";
import { invalidSchemaReason, mismatchMessage, toIssues } from "./messages.js";
import { checkSchemaBounds, schemaTooLarge } from "./schema-bounds.js";
import { useLinearUniqueItems } from "./unique-items.js";

/** One reason arguments do not match their schema. */
export interface ArgumentIssue {
  /** JSON Pointer into the arguments (`""` for the root). */
  readonly path: string;
  readonly message: string;
}

/** The result of checking arguments: ok, or a message the model can act on. */
export type ArgumentCheck = { readonly ok: true } | { readonly ok: false; readonly message: string; readonly issues: readonly ArgumentIssue[] };

/** A compiled input schema. Compiled once per distinct schema while it stays cached (B5). */
export interface ArgumentValidator {
  /** `schemaFingerprint` of the schema it was compiled from. */
  readonly fingerprint: string;
  /** Checks arguments without changing them. */
  check(args: unknown): ArgumentCheck;
}

type FormatsPlugin = (ajv: Ajv) => Ajv;
// ajv-formats is CommonJS: its function sits at `.default` under ESM and CJS interop alike.
const addFormats = ((addFormatsImport as unknown as { default?: FormatsPlugin }).default ?? addFormatsImport) as unknown as FormatsPlugin;

/** Options of {@link compileInputSchema}. */
export interface CompileOptions {
  /**
   * Refuse a `format` the host does not know (`SCHEMA_INVALID`, naming the tool, where, and
   * the known formats) instead of ignoring it. Pass it for native tools, whose partner can
   * fix the schema; leave it off (the default) for MCP servers' schemas, which a host cannot
   * change and whose unknown formats go unchecked, as JSON Schema allows.
   */
  readonly strictFormats?: boolean;
}

/** A `format` ajv ignored because it does not know it, and where. */
interface UnknownFormat {
  readonly format: string;
  /** JSON Pointer into the schema (`""` for the root). */
  readonly path: string;
}

/**
 * The unknown formats of the compilation under way: ajv reports them only through its
 * logger, during `compile`, which is synchronous.
 */
let unknownFormats: UnknownFormat[] | undefined;

/**
 * ajv's logger: ajv would write its warnings (`unknown format "phone" ignored …`) to the
 * console on every compile, naming no tool. Nothing goes to the console; unknown formats
 * are collected for {@link CompileOptions.strictFormats}, anything else ajv would log is
 * dropped.
 */
const AJV_LOGGER: Logger = {
  log: () => undefined,
  warn: (...parts: unknown[]) => {
    const match = /^unknown format "(.*)" ignored in schema at path "(.*)"$/s.exec(String(parts[0]));
    if (!match || !unknownFormats) return;
    const found = { format: match[1]!, path: match[2]!.slice(match[2]!.indexOf("#") + 1) };
    // ajv may generate a keyword's code, and warn, more than once for one place.
    if (!unknownFormats.some((known) => known.format === found.format && known.path === found.path)) unknownFormats.push(found);
  },
  error: () => undefined,
};

/**
 * `allErrors` so the model learns every problem at once (the message shows the first
 * 20); patterns run on RE2 ({@link linearRegExp}), in linear time. A `$ref` is inlined
 * only when its target has at most 8 keys: ajv inlines any target without refs of its
 * own, whatever its size: a 16 KB schema whose 300 properties each refer to one
 * 300-property definition would compile 90,000 subschemas. A larger target is compiled once
 * and called.
 */
const AJV_OPTIONS = {
  strict: false,
  allErrors: true,
  allowUnionTypes: true,
  inlineRefs: 8,
  code: { regExp: linearRegExp },
  logger: AJV_LOGGER,
} as const;

/**
 * Compilations the current engines take before they are replaced (B5). An ajv instance
 * keeps, in its code scope, a value for every schema it ever compiled, whatever
 * {@link compileAlone} removes: engines that lived for the process grew the host by
 * ~4.6 KB per distinct schema, forever, under an MCP server whose schema changes at each
 * listing. Once this many compilations are done (failed ones included: they may have
 * generated code), the next compile makes fresh engines; a validator compiled earlier
 * keeps its own engine alive only while it is referenced. Rotating costs the compile that
 * follows ~10-20 ms (three new instances with their formats, and a meta-schema compiled
 * again), once per 500 compilations of ~0.2 ms or more each.
 */
export const ENGINE_COMPILATIONS = 500;

let drafts: { draft7: Ajv; draft2019: Ajv; draft2020: Ajv } | undefined;
let compilationsOnEngines = 0;
let engineGenerations = 0;

function engines(): { draft7: Ajv; draft2019: Ajv; draft2020: Ajv } {
  if (!drafts) {
    drafts = {
      draft7: addFormats(useLinearUniqueItems(new Ajv(AJV_OPTIONS))),
      draft2019: addFormats(useLinearUniqueItems(new Ajv2019(AJV_OPTIONS) as unknown as Ajv)),
      draft2020: addFormats(useLinearUniqueItems(new Ajv2020(AJV_OPTIONS) as unknown as Ajv)),
    };
    compilationsOnEngines = 0;
    engineGenerations++;
  }
  return drafts;
}

/** How many sets of engines this process has made (internal: tests of B5's rotation). */
export function ajvEngineGenerations(): number {
  return engineGenerations;
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

/** A compiled schema and the formats ajv ignored in it, so a cached schema is refused alike. */
interface Compiled {
  readonly validator: ArgumentValidator;
  readonly unknownFormats: readonly UnknownFormat[];
  /** The value of {@link cacheInsertions} when it was last put at the end of the cache. */
  insertedAt: number;
}

/**
 * Distinct schemas whose validators are kept (B5). Without a bound, an MCP server whose
 * schema changes at each listing (a dynamic enum, dynamic property names) grew the cache
 * for as long as the process ran. Beyond it the least recently used is dropped; seen
 * again, it is compiled again.
 */
export const SCHEMA_CACHE_LIMIT = 1_000;

/**
 * By fingerprint, least recently used first. A hit in the older half is moved to the end;
 * one in the newer half stays where it is: moving costs two more lookups by a 71-character
 * key, which made a hit (on every turn's preparation) ~15% slower. So a schema is kept until
 * at least `SCHEMA_CACHE_LIMIT / 2` other schemas were compiled or used after it, not
 * `SCHEMA_CACHE_LIMIT - 1` as with a move on every hit.
 */
const cache = new Map<string, Compiled>();
/** Schema objects {@link checkSchemaBounds} accepted (a schema changed in place is checked again when it compiles). */
const withinBounds = new WeakSet<object>();
let cacheInsertions = 0;
let compiled = 0;

function remember(fingerprint: string, entry: Compiled): void {
  entry.insertedAt = ++cacheInsertions;
  cache.set(fingerprint, entry);
}

/**
 * Compiles a tool's input schema with ajv (formats enabled) or returns the validator
 * already compiled for an identical schema (B5). The cache holds 1,000 schemas and drops
 * one only after at least 500 others were used since it was: a schema in use compiles
 * once; one dropped and seen again compiles again.
 * Throws an {@link OpenWorkerError} coded `SCHEMA_INVALID` naming the tool when the schema
 * is not valid JSON Schema, and, with `strictFormats` (native tools), when it uses a
 * `format` the host does not know; `SCHEMA_TOO_LARGE` when it is beyond one of
 * `SCHEMA_BOUNDS` (checked before ajv sees it, so no schema holds the event loop for
 * long). ajv never writes to the console.
 *
 * @example
 * ```ts
 * const validator = compileInputSchema({ type: "object", required: ["q"] }, "example.web_search", { strictFormats: true });
 * validator.check({}); // { ok: false, message: "... must have required property 'q'", ... }
 * ```
 */
export function compileInputSchema(schema: JsonSchema, toolName = "(unnamed)", options: CompileOptions = {}): ArgumentValidator {
  // Before the fingerprint, whose sorting of a 500,000-key map alone costs 1.5 s; once per
  // schema object, so a cache hit on the same object costs what it did.
  const checkedNow = typeof schema === "object" && schema !== null && !withinBounds.has(schema);
  if (checkedNow) {
    checkSchemaBounds(schema, toolName);
    withinBounds.add(schema);
  }
  let fingerprint: string;
  try {
    fingerprint = schemaFingerprint(schema);
  } catch (cause) {
    // canonicalJson's only refusal: deeper than 256 levels, or cyclic.
    if (cause instanceof RangeError) throw schemaTooLarge(toolName, "jsonDepth", "", cause);
    throw cause;
  }
  let known = cache.get(fingerprint);
  if (!known) {
    known = compile(schema, toolName, fingerprint, checkedNow);
  } else if (cacheInsertions - known.insertedAt >= SCHEMA_CACHE_LIMIT / 2) {
    cache.delete(fingerprint);
    remember(fingerprint, known);
  }
  if (options.strictFormats && known.unknownFormats.length > 0) throw unknownFormatError(toolName, known.unknownFormats);
  return known.validator;
}

/** `boundsChecked`: this call walked the schema's bounds already; otherwise (an object seen before, perhaps changed in place since) they are walked here. */
function compile(schema: JsonSchema, toolName: string, fingerprint: string, boundsChecked: boolean): Compiled {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema) || schema.type !== "object") {
    throw new OpenWorkerError("SCHEMA_INVALID", `input schema of tool ${JSON.stringify(toolName)} must be an object schema ({"type":"object", ...})`, {
      details: { tool: toolName },
    });
  }
  if (!boundsChecked) checkSchemaBounds(schema, toolName);
  const engine = engineFor(schema, toolName);
  let validate: ValidateFunction;
  const formats: UnknownFormat[] = [];
  try {
    unknownFormats = formats;
    validate = compileAlone(engine, schema as Record<string, unknown>);
  } catch (cause) {
    if (cause instanceof UnsupportedPatternError) {
      const shown =
        cause.pattern.length > 200 ? `${JSON.stringify(cause.pattern.slice(0, 200))}… (${cause.pattern.length} characters)` : JSON.stringify(cause.pattern);
      throw new OpenWorkerError(
        "SCHEMA_INVALID",
        `input schema of tool ${JSON.stringify(toolName)} has the pattern ${shown}, which cannot be checked in linear time: ${cause.reason}; ` +
          "the host checks patterns with RE2 so that no argument can stall it, and refuses this schema",
        { cause, details: { tool: toolName, pattern: cause.pattern } },
      );
    }
    // ajv leaves the meta-schema's errors on the instance when the schema fails it.
    const reason = String((cause as Error).message).startsWith("schema is invalid:") ? invalidSchemaReason(schema, engine.errors) : undefined;
    throw new OpenWorkerError(
      "SCHEMA_INVALID",
      `input schema of tool ${JSON.stringify(toolName)} is not valid JSON Schema: ${reason ?? (cause as Error).message}`,
      { cause, details: { tool: toolName } },
    );
  } finally {
    unknownFormats = undefined;
    if (++compilationsOnEngines >= ENGINE_COMPILATIONS) drafts = undefined;
  }
  compiled++;
  const validator: ArgumentValidator = {
    fingerprint,
    check(args) {
      if (validate(args)) return { ok: true };
      const issues = toIssues(validate.errors ?? []);
      return { ok: false, message: mismatchMessage(issues), issues };
    },
  };
  const entry: Compiled = { validator, unknownFormats: formats, insertedAt: 0 };
  remember(fingerprint, entry);
  if (cache.size > SCHEMA_CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  return entry;
}

function unknownFormatError(toolName: string, formats: readonly UnknownFormat[]): OpenWorkerError {
  const where = formats
    .slice(0, 5)
    .map(({ format, path }) => `${JSON.stringify(clip(format, 100))} at ${path || "(root)"}`)
    .join(", ");
  const more = formats.length > 5 ? ` and ${formats.length - 5} more` : "";
  return new OpenWorkerError(
    "SCHEMA_INVALID",
    `input schema of tool ${JSON.stringify(toolName)} uses the unknown format ${where}${more}; the host would not check it. ` +
      `Known formats: ${Object.keys(engines().draft7.formats).join(", ")}. Use one of them, or a "pattern"`,
    { details: { tool: toolName, unknownFormats: formats } },
  );
}

/**
 * How many compilations this process has done (for benchmarks and tests of B5's cache):
 * one per distinct schema, plus one each time a schema dropped from the cache (it keeps
 * the 1,000 most recently used) is seen again.
 */
export function compiledSchemaCount(): number {
  return compiled;
}

/** How many validators the cache holds (internal: tests of B5's bound). */
export function cachedSchemaCount(): number {
  return cache.size;
}

/**
 * Compiles a schema as if it were the only one ajv had seen (B5, M3). ajv registers
 * every `$id` a compiled schema holds (its own and nested ones) in the instance: left
 * there, two tools with the same `$id` collide, a changed schema keeping its `$id` never
 * compiles again, and a `$ref` to another tool's `$id` resolves or not by compile order.
 * So whatever this compilation registered is removed once it is done, success or not;
 * the meta-schemas, registered before, stay. The validator keeps what it resolved.
 */
function compileAlone(engine: Ajv, schema: Record<string, unknown>): ValidateFunction {
  const refs = new Set(Object.keys(engine.refs));
  const schemas = new Set(Object.keys(engine.schemas));
  try {
    return engine.compile(schema);
  } finally {
    for (const key of Object.keys(engine.refs)) if (!refs.has(key)) delete engine.refs[key];
    for (const key of Object.keys(engine.schemas)) if (!schemas.has(key)) delete engine.schemas[key];
    // ajv also caches the schema object itself: a second compile of a schema that failed
    // would skip its meta-schema check. The fingerprint cache above stands in for it.
    (engine as unknown as { readonly _cache: Map<unknown, unknown> })._cache.delete(schema);
  }
}
