import { OpenWorkerError } from "../errors.js";
import type { JsonSchema } from "../json.js";
import { SCHEMA_ARRAYS, SCHEMA_MAPS, SCHEMA_VALUES } from "./dialect.js";

/**
 * What one input schema may hold before it is compiled (B5): ajv's compilation is
 * synchronous and costs ~0.1 ms per subschema, more for a pattern, and it cannot be
 * interrupted, so these bounds keep the worst schema within them to a fraction of a
 * second on the event loop. A schema beyond one is refused with `SCHEMA_TOO_LARGE`
 * naming the tool, the bound and where it broke. They are counted in one pass over the
 * schema's positions, before ajv sees it.
 *
 * @example
 * ```ts
 * Object.keys(properties).length <= SCHEMA_BOUNDS.subschemas; // as a first estimate
 * ```
 */
export const SCHEMA_BOUNDS = Object.freeze({
  /** Schemas in the input schema, itself included: every value of `properties`, `items`, `anyOf`, `$defs`, …. */
  subschemas: 4_096,
  /**
   * Levels of nesting. ajv nests each `anyOf`/`oneOf` branch inside the one before it, so
   * the k-th branch (from 0) counts k levels more than its keyword.
   */
  nesting: 128,
  /** Values of all the schema's `enum`s together. */
  enumValues: 100_000,
  /** `pattern`s and `patternProperties` keys (each is compiled by RE2). */
  patterns: 1_024,
  /** Characters of all those patterns together. */
  patternCharacters: 65_536,
  /** Levels of JSON (objects and arrays) in the whole schema, data in `default`, `const` and `examples` included: its fingerprint reads no deeper. */
  jsonDepth: 256,
  /** Names in one `dependentRequired` (or draft-07 `dependencies`) list: ajv's code for it grows with the square of it. */
  dependentNames: 256,
});

/** The name of one of {@link SCHEMA_BOUNDS}. */
export type SchemaBound = keyof typeof SCHEMA_BOUNDS;

const WHAT: Record<SchemaBound, string> = {
  subschemas: "holds more than {limit} subschemas",
  nesting: "nests deeper than {limit} levels (each anyOf/oneOf branch counts one level more than the one before it)",
  enumValues: "lists more than {limit} enum values",
  patterns: "has more than {limit} patterns",
  patternCharacters: "has more than {limit} characters of patterns",
  dependentNames: "lists more than {limit} names for one property of dependentRequired/dependencies",
  jsonDepth: "nests deeper than {limit} levels of JSON, or holds itself",
};

const FIX: Record<SchemaBound, string> = {
  subschemas: "split the tool, or describe a long list of alike properties once (additionalProperties, patternProperties)",
  nesting: "flatten it, and write a long anyOf/oneOf of constants as an enum",
  enumValues: "take the value as a string and check it in the tool",
  patterns: "share patterns, or check the values in the tool",
  patternCharacters: "shorten the patterns, or check the values in the tool",
  dependentNames: "require fewer names together, or check them in the tool",
  jsonDepth: "flatten it",
};

/** The error for a schema beyond a bound, naming the tool, the bound, and where (a JSON Pointer, `""` for the root). */
export function schemaTooLarge(toolName: string, bound: SchemaBound, path: string, cause?: unknown): OpenWorkerError {
  const limit = SCHEMA_BOUNDS[bound];
  const what = WHAT[bound].replace("{limit}", limit.toLocaleString("en-US"));
  return new OpenWorkerError(
    "SCHEMA_TOO_LARGE",
    `input schema of tool ${JSON.stringify(toolName)} ${what} (at ${path || "(root)"}); the host refuses it so that compiling it cannot hold up the host: ${FIX[bound]}`,
    { cause, details: { tool: toolName, bound, limit, path } },
  );
}

interface Pending {
  readonly node: unknown;
  readonly nesting: number;
  readonly path: string;
}

function pointer(parent: string, key: string | number): string {
  return `${parent}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/**
 * Throws {@link schemaTooLarge} at the first of {@link SCHEMA_BOUNDS} the schema breaks.
 * Only schema positions are walked (as the dialect's reading does); counting stops at
 * the first breach, so a schema of a million properties costs as much as one just over
 * the bound.
 */
export function checkSchemaBounds(schema: JsonSchema, toolName: string): void {
  let subschemas = 1;
  let enumValues = 0;
  let patterns = 0;
  let patternCharacters = 0;
  const pending: Pending[] = [{ node: schema, nesting: 0, path: "" }];
  const push = (node: unknown, nesting: number, path: string): void => {
    if (++subschemas > SCHEMA_BOUNDS.subschemas) throw schemaTooLarge(toolName, "subschemas", path);
    if (nesting > SCHEMA_BOUNDS.nesting) throw schemaTooLarge(toolName, "nesting", path);
    if (typeof node === "object" && node !== null) pending.push({ node, nesting, path });
  };
  const pattern = (text: string, path: string): void => {
    if (++patterns > SCHEMA_BOUNDS.patterns) throw schemaTooLarge(toolName, "patterns", path);
    if ((patternCharacters += text.length) > SCHEMA_BOUNDS.patternCharacters) throw schemaTooLarge(toolName, "patternCharacters", path);
  };
  while (pending.length > 0) {
    const { node, nesting, path } = pending.pop()!;
    if (Array.isArray(node)) continue;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      const at = pointer(path, key);
      if (key === "enum" && Array.isArray(value)) {
        if ((enumValues += value.length) > SCHEMA_BOUNDS.enumValues) throw schemaTooLarge(toolName, "enumValues", at);
      } else if (key === "pattern" && typeof value === "string") pattern(value, at);
      else if (key === "dependentRequired") dependentNames(value, at, toolName);
      if (typeof value !== "object" || value === null) {
        if (typeof value === "boolean" && (SCHEMA_VALUES.has(key) || SCHEMA_ARRAYS.has(key))) push(value, nesting + 1, at);
        continue;
      }
      if (Array.isArray(value)) {
        if (!SCHEMA_VALUES.has(key) && !SCHEMA_ARRAYS.has(key)) continue;
        const branches = key === "anyOf" || key === "oneOf";
        for (let index = 0; index < value.length; index++) push(value[index], nesting + 1 + (branches ? index : 0), pointer(at, index));
      } else if (SCHEMA_VALUES.has(key)) push(value, nesting + 1, at);
      else if (SCHEMA_MAPS.has(key)) {
        // for…in, not Object.entries: listing the entries of a 500,000-key map first costs a second.
        for (const name in value) {
          if (!Object.hasOwn(value, name)) continue;
          const item = (value as Record<string, unknown>)[name];
          if (key === "patternProperties") pattern(name, pointer(at, name));
          if (key === "dependencies" && Array.isArray(item)) dependentNames({ [name]: item }, at, toolName);
          else push(item, nesting + 1, pointer(at, name));
        }
      }
    }
  }
}

function dependentNames(value: unknown, path: string, toolName: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return;
  for (const name in value) {
    if (!Object.hasOwn(value, name)) continue;
    const names = (value as Record<string, unknown>)[name];
    if (Array.isArray(names) && names.length > SCHEMA_BOUNDS.dependentNames) throw schemaTooLarge(toolName, "dependentNames", pointer(path, name));
  }
}
