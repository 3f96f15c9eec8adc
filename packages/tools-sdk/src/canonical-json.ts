/**
 * Serializes JSON with object keys sorted at every depth, so that equal values always
 * give equal text: the input of every fingerprint and identity hash.
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, 0));
}

const MAX_DEPTH = 256;

function sortKeys(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new RangeError(`value nests deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((item) => sortKeys(item, depth + 1));
  if (typeof value !== "object" || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    sorted[key] = sortKeys((value as Record<string, unknown>)[key], depth + 1);
  }
  return sorted;
}
