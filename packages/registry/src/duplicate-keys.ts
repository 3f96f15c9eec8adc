/**
 * Where a JSON document repeats a key: the path of the object (`""` for the root) and the key.
 *
 * @example
 * ```ts
 * const duplicate: DuplicateJsonKey = { path: "servers", key: "acer" };
 * ```
 */
export interface DuplicateJsonKey {
  /** Dotted path of the object holding the key twice, with `[i]` for array items; `""` for the root. */
  readonly path: string;
  readonly key: string;
}

type Frame =
  | { readonly kind: "object"; readonly path: string; readonly keys: Set<string>; expectKey: boolean; lastKey: string }
  | { readonly kind: "array"; readonly path: string; index: number };

/**
 * Finds the first key a JSON object repeats. `JSON.parse` silently keeps the last of
 * two equal keys; in a configuration file that hides a mistake (two servers on one
 * namespace, a selection listed twice), so the config parsers refuse it. Call it on text
 * `JSON.parse` accepted.
 *
 * @example
 * ```ts
 * findDuplicateJsonKey('{"servers":{"acer":{},"acer":{}}}'); // { path: "servers", key: "acer" }
 * ```
 */
export function findDuplicateJsonKey(text: string): DuplicateJsonKey | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const character = text[i];
    const top = stack.at(-1);
    if (character === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      if (top?.kind === "object" && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return { path: top.path, key };
        top.keys.add(key);
        top.lastKey = key;
        top.expectKey = false;
      }
      i = end;
    } else if (character === "{" || character === "[") {
      const path = childPath(top);
      stack.push(character === "{" ? { kind: "object", path, keys: new Set(), expectKey: true, lastKey: "" } : { kind: "array", path, index: 0 });
    } else if (character === "}" || character === "]") {
      stack.pop();
    } else if (character === ",") {
      if (top?.kind === "object") top.expectKey = true;
      else if (top?.kind === "array") top.index++;
    }
  }
  return undefined;
}

function childPath(parent: Frame | undefined): string {
  if (!parent) return "";
  if (parent.kind === "array") return `${parent.path}[${parent.index}]`;
  return parent.path === "" ? parent.lastKey : `${parent.path}.${parent.lastKey}`;
}
