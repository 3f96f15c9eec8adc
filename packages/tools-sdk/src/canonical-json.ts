/**
 * Serializes JSON with object keys sorted at every depth, so that equal values always
 * give equal text: the input of every fingerprint and identity hash.
 *
 * Every object is read through `Object.keys` (own enumerable string keys), so an object
 * with `toJSON` (a `Date`, say) serializes as its keys, never through `toJSON`; values
 * JSON cannot hold are dropped from objects and become `null` in arrays, as
 * `JSON.stringify` does. Deeper than 256 levels (or cyclic) throws a `RangeError`.
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(isCanonical(value, 0) ? value : sorted(value, 0));
}

const MAX_DEPTH = 256;

/**
 * Whether `JSON.stringify(value)` is already canonical: every object plain with its keys
 * in sorted order, every array plain. A walk that allocates nothing, for the common case
 * (records built in key order); `false` sends the value through {@link sorted}. A `for…in`
 * sees an object's own keys in `Object.keys` order (then inherited enumerable ones, which
 * can only make it report `false`).
 */
function isCanonical(value: unknown, depth: number): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (depth > MAX_DEPTH) throw new RangeError(`value nests deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype || "toJSON" in value) return false;
    for (let index = 0; index < value.length; index += 1) if (!isCanonical(value[index], depth + 1)) return false;
    return true;
  }
  if (!isPlain(value)) return false;
  const source = value as Record<string, unknown>;
  let previous: string | undefined;
  for (const key in source) {
    if (previous !== undefined && previous > key) return false;
    previous = key;
    if (!isCanonical(source[key], depth + 1)) return false;
  }
  return true;
}

/**
 * `value` with every object's keys in sorted order, for `JSON.stringify`. Copy on write:
 * a plain object or array that is already canonical is returned as it is, so the common
 * case (records built in key order, small argument objects) allocates nothing; only what
 * must change is copied.
 */
function sorted(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new RangeError(`value nests deeper than ${MAX_DEPTH} levels`);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return sortedArray(value, depth);
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  if (!isPlain(source) || !inOrder(keys)) {
    const copy = ownKeysObject();
    for (const key of sortKeys(keys)) {
      const item = source[key];
      // An own `toJSON` function would make `JSON.stringify` serialize the copy through it;
      // as a member, a function is left out anyway.
      if (key === "toJSON" && typeof item === "function") continue;
      copy[key] = sorted(item, depth + 1);
    }
    return copy;
  }
  let copy: Record<string, unknown> | undefined;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    const item = source[key];
    const next = sorted(item, depth + 1);
    if (copy === undefined && next !== item) {
      copy = ownKeysObject();
      for (let before = 0; before < index; before += 1) copy[keys[before]!] = source[keys[before]!];
    }
    if (copy !== undefined) copy[key] = next;
  }
  return copy ?? source;
}

function sortedArray(value: readonly unknown[], depth: number): unknown[] {
  // An array with a `toJSON` (its own, or a subclass's) is copied, so it serializes as
  // its items; holes read as `undefined` and serialize as `null` either way.
  let copy: unknown[] | undefined = Object.getPrototypeOf(value) === Array.prototype && !("toJSON" in value) ? undefined : [];
  if (copy !== undefined) {
    for (let index = 0; index < value.length; index += 1) copy.push(sorted(value[index], depth + 1));
    return copy;
  }
  for (let index = 0; index < value.length; index += 1) {
    const item = value[index];
    const next = sorted(item, depth + 1);
    if (copy === undefined && next !== item) copy = value.slice(0, index);
    if (copy !== undefined) copy.push(next);
  }
  return copy ?? (value as unknown[]);
}

/**
 * An empty object for a sorted copy, without a prototype: assigning `"__proto__"` to a
 * plain `{}` would set its prototype and drop the key, so `{"__proto__":…,"b":1}` (which
 * `JSON.parse` makes with an own `__proto__` key) would canonicalize like `{"b":1}` and
 * share its digest.
 */
function ownKeysObject(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

/** An object `JSON.stringify` serializes as exactly its own enumerable keys. */
function isPlain(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

/**
 * Sorts keys in place as `Array.prototype.sort()` does (by UTF-16 code units). Small
 * objects (the usual arguments and results) are sorted by insertion: the built-in sort
 * allocates its own work arrays each time, which at a journal's rate was about a seventh
 * of everything it allocated.
 */
function sortKeys(keys: string[]): string[] {
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  for (let index = 1; index < keys.length; index += 1) {
    const key = keys[index]!;
    let at = index - 1;
    for (; at >= 0 && keys[at]! > key; at -= 1) keys[at + 1] = keys[at]!;
    keys[at + 1] = key;
  }
  return keys;
}

const INSERTION_SORT_MAX = 16;

function inOrder(keys: readonly string[]): boolean {
  for (let index = 1; index < keys.length; index += 1) if (keys[index - 1]! > keys[index]!) return false;
  return true;
}
