import type { JsonSchema } from "../json.js";

/** A JSON Schema dialect the SDK compiles. */
export type Dialect = "draft-07" | "2019-09" | "2020-12";

/** Keywords 2019-09 and 2020-12 share, which a draft-07 reader ignores. */
const KEYWORDS_2019_AND_2020 = new Set(["dependentRequired", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "minContains", "maxContains"]);
/** Keywords of 2020-12 only (`prefixItems` also changes what `items` means). */
const KEYWORDS_2020_ONLY = new Set(["prefixItems", "$dynamicRef", "$dynamicAnchor"]);
/** Keywords of 2019-09 only, which 2020-12 replaced (`$dynamicRef`). */
const KEYWORDS_2019_ONLY = new Set(["$recursiveRef", "$recursiveAnchor"]);
/** Keywords whose value is one schema (`items` may also be an array of them, draft-07's tuple form). */
export const SCHEMA_VALUES: ReadonlySet<string> = new Set([
  "items",
  "additionalItems",
  "additionalProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contentSchema",
]);
/** Keywords whose value is an array of schemas. */
export const SCHEMA_ARRAYS: ReadonlySet<string> = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords whose value maps names to schemas (draft-07's `dependencies` also to arrays of names). */
export const SCHEMA_MAPS: ReadonlySet<string> = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"]);

/**
 * The dialect of a schema that declares none. MCP's 2025-11-25 revision reads such a
 * schema as 2020-12, older revisions and most servers' generators (draft-07 with
 * `$schema`, or none) as draft-07. Read by what it uses: a schema with a keyword only
 * 2019-09/2020-12 know (`prefixItems`, `dependentRequired`, `unevaluatedProperties`, …)
 * and no draft-07-only form (`items` as an array, `additionalItems`, `dependencies`) is
 * 2020-12 (2019-09 when it uses `$recursiveRef`/`$recursiveAnchor`, which 2020-12
 * replaced); a schema mixing keywords only one of those has is read as draft-07, as every
 * other is, as before (the dialects read the common keywords alike).
 *
 * Only schema positions are walked (the values of the keywords above): the value of any
 * other keyword is data or unknown to every dialect (`example`, `x-*`, `enum`, `default`),
 * and an argument named `items` in an OpenAPI `example` is not draft-07's tuple form.
 */
export function undeclaredDialect(schema: JsonSchema): Dialect {
  let shared = false;
  let only2020 = false;
  let only2019 = false;
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== "object" || node === null || Array.isArray(node)) continue;
    for (const [key, value] of Object.entries(node)) {
      if (key === "additionalItems" || key === "dependencies" || (key === "items" && Array.isArray(value))) return "draft-07";
      if (KEYWORDS_2019_AND_2020.has(key)) shared = true;
      else if (KEYWORDS_2020_ONLY.has(key)) only2020 = true;
      else if (KEYWORDS_2019_ONLY.has(key)) only2019 = true;
      if (typeof value !== "object" || value === null) continue;
      // One push per item: spreading a schema's array of 200,000 items into push() would
      // overflow the stack.
      if (Array.isArray(value)) {
        if (SCHEMA_VALUES.has(key) || SCHEMA_ARRAYS.has(key)) for (const item of value) pending.push(item);
      } else if (SCHEMA_VALUES.has(key)) pending.push(value);
      else if (SCHEMA_MAPS.has(key)) for (const item of Object.values(value)) pending.push(item);
    }
  }
  if (only2019 && only2020) return "draft-07";
  if (only2019) return "2019-09";
  return only2020 || shared ? "2020-12" : "draft-07";
}
