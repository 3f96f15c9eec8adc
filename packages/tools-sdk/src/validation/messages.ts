import type { ErrorObject } from "ajv";
import { boundErrorMessage } from "../execution/normalize.js";
import { clip } from "../text.js";
import type { ArgumentIssue } from "./compile.js";

/** How many issues an argument mismatch's message spells out; the rest are counted (E5). */
const MESSAGE_ISSUES = 20;
/** How many characters of allowed values an `enum` or `const` issue shows. */
const ALLOWED_CHARACTERS = 200;
/** How many characters of one value a message shows. */
const VALUE_CHARACTERS = 100;

/** The type names of JSON Schema, the only values `type` takes. */
export const JSON_SCHEMA_TYPES: readonly string[] = Object.freeze(["array", "boolean", "integer", "null", "number", "object", "string"]);
/** The `type` values TypeBox gives its JavaScript-only types (`Type.BigInt()`, `Type.Undefined()`, …): no JSON value has them. */
const TYPEBOX_JAVASCRIPT_TYPES = new Set(["bigint", "undefined", "symbol", "void", "function", "constructor"]);

/**
 * The reasons arguments do not match, as the model reads them ({@link toIssue}), with
 * each failed union of literals told as one issue that names its values.
 *
 * ajv reports a failed `anyOf` (or `oneOf`) as one error per branch and then the `anyOf`
 * error itself, all together: for `Type.Union([Type.Literal("kg"), Type.Literal("lb")])`,
 * "must be equal to constant" twice (with a "must be string" per branch for a number) and
 * "must match a schema in anyOf". When every branch of the union failed only on its
 * `const`, those become `must be equal to one of the allowed values: "kg", "lb"`, as for an
 * `enum`. Any other union keeps ajv's errors.
 */
export function toIssues(errors: readonly ErrorObject[]): ArgumentIssue[] {
  const issues: ArgumentIssue[] = [];
  const sources: ErrorObject[] = [];
  for (const error of errors) {
    const union = error.keyword === "anyOf" || (error.keyword === "oneOf" && (error.params as { passingSchemas?: unknown }).passingSchemas == null);
    const first = union ? literalBranchesStart(sources, error) : -1;
    if (first >= 0) {
      const values = sources.slice(first).flatMap((branch) => (branch.keyword === "const" ? [(branch.params as { allowedValue?: unknown }).allowedValue] : []));
      issues.length = sources.length = first;
      issues.push({ path: error.instancePath, message: `must be equal to one of the allowed values: ${allowedValues(values)}` });
    } else issues.push(toIssue(error));
    sources.push(error);
  }
  return issues;
}

/**
 * Where the branch errors of a failed union start in `before`, when every branch is a
 * literal: the errors just before it, at the same value, are `const` (or `type`) errors of
 * its branches `0…n`, each branch with its `const`. Otherwise -1.
 */
function literalBranchesStart(before: readonly ErrorObject[], union: ErrorObject): number {
  const prefix = `${union.schemaPath}/`;
  const branches = new Set<number>();
  const typed = new Set<number>();
  let start = before.length;
  while (start > 0) {
    const branch = before[start - 1]!;
    if (branch.instancePath !== union.instancePath || !branch.schemaPath.startsWith(prefix)) break;
    const match = /^(\d+)\/(const|type)$/.exec(branch.schemaPath.slice(prefix.length));
    if (!match || match[2] !== branch.keyword) return -1;
    (branch.keyword === "const" ? branches : typed).add(Number(match[1]));
    start--;
  }
  if (branches.size === 0 || [...typed].some((index) => !branches.has(index))) return -1;
  for (let index = 0; index < branches.size; index++) if (!branches.has(index)) return -1;
  return start;
}

/**
 * One reason arguments do not match, as the model reads it: ajv's message, with the
 * property it did not expect, or the values it allows (`enum`, `const`), bounded in length.
 */
export function toIssue(error: ErrorObject): ArgumentIssue {
  const params = error.params as { additionalProperty?: string; allowedValues?: unknown; allowedValue?: unknown };
  let extra = "";
  if (error.keyword === "additionalProperties") extra = ` (${JSON.stringify(params.additionalProperty)})`;
  else if (error.keyword === "enum" && Array.isArray(params.allowedValues)) extra = `: ${allowedValues(params.allowedValues)}`;
  else if (error.keyword === "const") extra = ` ${shownValue(params.allowedValue)}`;
  return { path: error.instancePath, message: `${error.message ?? "is invalid"}${extra}` };
}

/**
 * The first {@link MESSAGE_ISSUES} issues, then how many more, within
 * `LIMITS.errorMessageBytes` (E5): with `allErrors`, 256 KB of arguments can break a
 * schema 130,000 times, and the message goes to the journal and to the model.
 */
export function mismatchMessage(issues: readonly ArgumentIssue[]): string {
  const shown = issues.length > MESSAGE_ISSUES ? issues.slice(0, MESSAGE_ISSUES) : issues;
  let message = shown.map((issue) => `${issue.path || "(root)"} ${issue.message}`).join("; ");
  if (issues.length > shown.length) message += `; … (${issues.length - shown.length} more)`;
  return boundErrorMessage(message);
}

// An enum's array (a const's object) is the schema's own, the same for every issue it
// raises: it is described once, not once for each of 130,000 failing items.
const describedEnums = new WeakMap<readonly unknown[], string>();
const describedValues = new WeakMap<object, string>();

/** `"a", "b", "c"`, or as many as fit in {@link ALLOWED_CHARACTERS} and how many more. */
function allowedValues(values: readonly unknown[]): string {
  const known = describedEnums.get(values);
  if (known !== undefined) return known;
  let text = "";
  let count = 0;
  for (const value of values) {
    const shown = shownValue(value);
    if (count > 0 && text.length + shown.length > ALLOWED_CHARACTERS) break;
    text += count === 0 ? shown : `, ${shown}`;
    count++;
  }
  if (count < values.length) text += `, … (${values.length - count} more)`;
  describedEnums.set(values, text);
  return text;
}

/** A value of a schema as JSON, cut at {@link VALUE_CHARACTERS}. */
function shownValue(value: unknown): string {
  if (typeof value === "string" && value.length > VALUE_CHARACTERS) return `${JSON.stringify(value.slice(0, VALUE_CHARACTERS))}…`;
  if (typeof value === "object" && value !== null) {
    const known = describedValues.get(value);
    if (known !== undefined) return known;
    const text = clip(JSON.stringify(value) ?? String(value), VALUE_CHARACTERS);
    describedValues.set(value, text);
    return text;
  }
  return clip(JSON.stringify(value) ?? String(value), VALUE_CHARACTERS);
}

/**
 * Why a schema is not valid JSON Schema, from ajv's meta-schema errors, in words a
 * partner can act on. ajv says of `{"type":"int"}` only that `type` "must be equal to one
 * of the allowed values, must be array, must match a schema in anyOf"; this quotes the
 * value, lists the JSON Schema types, and names TypeBox's JavaScript-only types
 * (`Type.BigInt()` gives `"bigint"`) for what they are. Other meta-schema errors keep
 * ajv's words. Returns `undefined` when there is nothing to add to ajv's message.
 */
export function invalidSchemaReason(schema: unknown, errors: readonly ErrorObject[] | null | undefined): string | undefined {
  if (!errors || errors.length === 0) return undefined;
  const typePaths = new Set<string>();
  const others: string[] = [];
  for (const error of errors) {
    const typePath = typeKeywordPath(error);
    if (typePath !== undefined) typePaths.add(typePath);
    else others.push(`${error.instancePath || "(root)"} ${error.message ?? "is invalid"}`);
  }
  // A schema can break its meta-schema 100,000 times; the message names the first 20, as for arguments.
  if (typePaths.size === 0) return errors.length > MESSAGE_ISSUES ? boundedReasons(others) : undefined;
  return boundedReasons([...[...typePaths].map((path) => typeReason(path, valueAt(schema, path))), ...others]);
}

function boundedReasons(reasons: readonly string[]): string {
  const shown =
    reasons.length > MESSAGE_ISSUES ? `${reasons.slice(0, MESSAGE_ISSUES).join("; ")}; … (${reasons.length - MESSAGE_ISSUES} more)` : reasons.join("; ");
  return boundErrorMessage(shown);
}

/** The pointer of the `type` keyword an error is about, if it is about one. */
function typeKeywordPath(error: ErrorObject): string | undefined {
  const aboutType = error.schemaPath.endsWith("/simpleTypes/enum") || error.schemaPath.startsWith("#/properties/type/");
  if (!aboutType) return undefined;
  const path = error.instancePath.replace(/\/type\/\d+$/, "/type");
  return path.endsWith("/type") ? path : undefined;
}

function typeReason(path: string, value: unknown): string {
  const where = `at ${path.slice(0, -"/type".length) || "(root)"}`;
  const types = `the JSON Schema types are ${JSON_SCHEMA_TYPES.join(", ")}`;
  const names = typeof value === "string" ? [value] : Array.isArray(value) ? value.filter((item) => !JSON_SCHEMA_TYPES.includes(item as string)) : undefined;
  if (names === undefined || names.length === 0 || names.some((name) => typeof name !== "string")) {
    return `${where} "type" is ${shownValue(value)}, which is neither a type name nor an array of them (${types})`;
  }
  const quoted = `${typeof value === "string" ? "is" : "lists"} ${names.map((name) => shownValue(name)).join(", ")}`;
  const typebox = names.filter((name) => TYPEBOX_JAVASCRIPT_TYPES.has(name as string));
  const hint =
    typebox.length > 0
      ? `; ${typebox.map((name) => `"${name as string}"`).join(", ")} is what TypeBox gives a JavaScript-only type (Type.BigInt(), Type.Undefined(), Type.Symbol(), Type.Void(), Type.Function(), Type.Constructor()), which no JSON argument can have: use a JSON type (a BigInt as Type.String() or Type.Integer(), an optional field as Type.Optional(…))`
      : "";
  return `${where} "type" ${quoted}, which is not a JSON Schema type (${types})${hint}`;
}

/** The value at a JSON Pointer of the schema, or `undefined`. */
function valueAt(schema: unknown, pointer: string): unknown {
  let node = schema;
  for (const part of pointer.split("/").slice(1)) {
    if (typeof node !== "object" || node === null) return undefined;
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    node = Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;
  }
  return node;
}
