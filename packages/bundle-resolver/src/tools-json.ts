import { findDuplicateJsonKey, jsonSyntaxProblem } from "@openworker/registry/internal";
import { OpenWorkerError, validateNamespace, validateQualifiedName } from "@openworker/tools-sdk";
import { BUNDLE_ERROR_CODES as CODES } from "./codes.js";
import { checkTextSize, stripBom } from "./text.js";

/**
 * A bundle's selection (B1–B3): the tools the coworker may see, and nothing else (B2).
 * v3 lists qualified names of native or MCP tools; v2 and v1 are the older MCP-only
 * formats: v2 lists remote tool names per server, v1 takes every tool of each server.
 *
 * @example
 * ```ts
 * const selection: BundleSelection = { version: 2, mcpServers: { acer: ["acer_care_center_batterystatus_get"] } };
 * ```
 */
export type BundleSelection =
  | { readonly version: 3; readonly tools: readonly string[] }
  | { readonly version: 2; readonly mcpServers: Readonly<Record<string, readonly string[]>> }
  | { readonly version: 1; readonly mcpServers: readonly string[] };

const FIELDS: Record<number, readonly string[]> = { 1: ["version", "mcpServers"], 2: ["version", "mcpServers"], 3: ["version", "tools"] };

/**
 * Parses `tools.json` (B3, B6). Names are checked on their own (N1, N3, N4), duplicates
 * and unknown fields fail; whether a name exists is decided later, by resolution. A
 * leading BOM is fine. Every error names the file, the field and the problem.
 *
 * The document's shape (JSON, version, fields) is checked first and its first problem is
 * thrown. Then every entry is checked on its own, and when some fail, the first is thrown
 * with the count of the others in its message and `details.problems` holding all of
 * them (same codes), plus `details.selection`: the selection without the failing entries,
 * so `tools check` can resolve the rest and list their problems too. It is for
 * diagnostics only: a bundle with a failing entry never runs.
 *
 * @example
 * ```ts
 * parseToolsJson('{"version":3,"tools":["example.web_search"]}', "tools.json");
 * // { version: 3, tools: ["example.web_search"] }
 * ```
 */
export function parseToolsJson(text: string, file: string): BundleSelection {
  checkTextSize(text, file);
  let document: unknown;
  try {
    document = JSON.parse(stripBom(text));
  } catch (cause) {
    throw new OpenWorkerError(CODES.toolsJsonInvalidJson, `${file}: not valid JSON, ${jsonSyntaxProblem(stripBom(text), cause)}`, {
      cause,
      details: { file },
    });
  }
  // JSON.parse keeps the last of two equal keys; a server or field given twice is a mistake (B6).
  const duplicate = findDuplicateJsonKey(stripBom(text));
  if (duplicate) {
    const where = duplicate.path === "" ? "" : ` in "${duplicate.path}"`;
    throw new OpenWorkerError(CODES.duplicateEntry, `${file}: key ${JSON.stringify(duplicate.key)} appears twice${where}; give each once`, {
      details: { file, field: duplicate.path, key: duplicate.key },
    });
  }
  const invalid = (field: string, problem: string): OpenWorkerError =>
    new OpenWorkerError(CODES.toolsJsonInvalid, `${file}: field ${JSON.stringify(field)} ${problem}`, {
      details: { file, field },
    });
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    throw new OpenWorkerError(
      CODES.toolsJsonInvalid,
      `${file}: must be a JSON object like {"version":3,"tools":["example.web_search"]}, got ${typeOf(document)}`,
      { details: { file } },
    );
  }
  const fields = document as Record<string, unknown>;
  const version = fields.version;
  if (version === undefined) throw invalid("version", "is missing; use 3 for a list of qualified tool names");
  const known = typeof version === "number" ? FIELDS[version] : undefined;
  if (!known) {
    throw new OpenWorkerError(
      CODES.versionUnknown,
      `${file}: field "version" is ${typeof version === "number" ? String(version) : JSON.stringify(version)}; supported versions are the numbers 3, 2 and 1`,
      { details: { file, field: "version", version } },
    );
  }
  const unknown = Object.keys(fields).find((key) => !known.includes(key));
  if (unknown !== undefined) {
    throw invalid(unknown, `is not known in version ${version} (known: ${known.join(", ")})`);
  }
  const context: Context = { file, invalid, problems: [] };
  const selection: BundleSelection =
    version === 3
      ? Object.freeze({ version, tools: parseNames(fields.tools, "tools", context, qualified) })
      : version === 2
        ? Object.freeze({ version, mcpServers: parseServerTools(fields.mcpServers, context) })
        : Object.freeze({ version: 1 as const, mcpServers: parseNames(fields.mcpServers, "mcpServers", context, namespace) });
  if (context.problems.length > 0) throw entryProblems(context.problems, selection);
  return selection;
}

/** The first entry problem, counting the others, with all of them in `details.problems`. */
function entryProblems(problems: readonly OpenWorkerError[], selection: BundleSelection): OpenWorkerError {
  const [first, ...others] = problems as [OpenWorkerError, ...OpenWorkerError[]];
  const more = others.length === 0 ? "" : ` (and ${others.length} more problem${others.length === 1 ? "" : "s"} in this file)`;
  return new OpenWorkerError(first.code, `${first.message}${more}`, {
    cause: first.cause,
    details: { ...first.details, problems: Object.freeze([...problems]), selection },
  });
}

interface Context {
  readonly file: string;
  readonly invalid: (field: string, problem: string) => OpenWorkerError;
  /** Problems of single entries, in file order; parsing goes on with the next entry. */
  readonly problems: OpenWorkerError[];
}

function parseServerTools(value: unknown, context: Context): Readonly<Record<string, readonly string[]>> {
  if (value === undefined) throw context.invalid("mcpServers", 'is missing; version 2 maps servers to tool names: {"acer":["tool"]}');
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw context.invalid("mcpServers", `must be an object mapping servers to tool names, got ${typeOf(value)}`);
  }
  // No prototype: a server named "__proto__" is kept as a key (an ordinary object's setter
  // would drop it), and `mcpServers[name]` never finds Object.prototype members.
  const servers = Object.create(null) as Record<string, readonly string[]>;
  for (const [server, tools] of Object.entries(value)) {
    const field = `mcpServers.${server}`;
    if (!check(() => validateNamespace(server), field, context)) continue;
    if (!Array.isArray(tools)) {
      context.problems.push(context.invalid(field, `must be an array of strings, got ${typeOf(tools)}`));
      continue;
    }
    const before = context.problems.length;
    const names = parseNames(tools, field, context, (name) => validateQualifiedName(`${server}.${name}`));
    if (names.length > 0) servers[server] = names;
    else if (context.problems.length === before) {
      context.problems.push(context.invalid(field, "lists no tools; name the tools to select or remove the server"));
    }
  }
  return Object.freeze(servers);
}

/**
 * The valid names of a list, in order. A missing or mistyped list is the document's
 * shape and is thrown; each bad entry goes to `context.problems` and is left out.
 */
function parseNames(value: unknown, field: string, context: Context, validate: (name: string) => unknown): readonly string[] {
  if (value === undefined) throw context.invalid(field, "is missing");
  if (!Array.isArray(value)) throw context.invalid(field, `must be an array of strings, got ${typeOf(value)}`);
  const seen = new Map<string, number>();
  const names: string[] = [];
  for (const [index, name] of (value as unknown[]).entries()) {
    const at = `${field}[${index}]`;
    if (typeof name !== "string") {
      context.problems.push(context.invalid(at, `must be a string, got ${typeOf(name)}`));
      continue;
    }
    if (name.length === 0) {
      context.problems.push(context.invalid(at, "is empty; give a name"));
      continue;
    }
    if (!check(() => validate(name), at, context)) continue;
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      context.problems.push(
        new OpenWorkerError(
          CODES.duplicateEntry,
          `${context.file}: field "${at}" repeats ${JSON.stringify(name)} from "${field}[${earlier}]"; list each name once`,
          { details: { file: context.file, field: at, name, earlier } },
        ),
      );
      continue;
    }
    seen.set(name, index);
    names.push(name);
  }
  return Object.freeze(names);
}

function qualified(name: string): unknown {
  return validateQualifiedName(name);
}

function namespace(name: string): unknown {
  validateNamespace(name);
  return undefined;
}

/** Runs an SDK name check; records its error prefixed with the file and field (code kept) and returns false. */
function check(action: () => unknown, field: string, context: Context): boolean {
  try {
    action();
    return true;
  } catch (error) {
    if (!OpenWorkerError.isInstance(error)) throw error;
    context.problems.push(
      new OpenWorkerError(error.code, `${context.file}: field ${JSON.stringify(field)}: ${error.message}`, {
        cause: error,
        details: { ...error.details, file: context.file, field },
      }),
    );
    return false;
  }
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
