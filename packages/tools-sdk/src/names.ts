import { OpenWorkerError } from "./errors.js";
import { LIMITS } from "./limits.js";

/** The namespace no native tool or MCP provider may use (N3), in any letter case. */
export const RESERVED_NAMESPACE = "openworker";

/** A qualified name split at its first dot (N1). */
export interface QualifiedName {
  /** Everything before the first dot: the native package's or MCP provider's namespace. */
  readonly namespace: string;
  /** Everything after the first dot; for MCP tools, the exact remote tool name. */
  readonly tool: string;
}

/** The model aliases of the reserved namespace's tools (N2, N3), in any letter case. */
const RESERVED_ALIAS_PREFIX = `${RESERVED_NAMESPACE}__`;

const NAME_CHARACTERS = /^[A-Za-z0-9_.-]+$/;
const NAMESPACE_CHARACTERS = /^[A-Za-z0-9_-]+$/;

/**
 * The model alias of a qualified name (N2): every `.` becomes `__`. Aliases are an
 * encoding for model transport, not a second namespace; nobody registers them.
 *
 * @example
 * ```ts
 * modelAlias("example.web_search"); // "example__web_search"
 * ```
 */
export function modelAlias(qualifiedName: string): string {
  return qualifiedName.replaceAll(".", "__");
}

/**
 * Checks a namespace on its own (N1, N3): ASCII letters, digits, `_` and `-`, not the
 * reserved `openworker`, and none whose model aliases would start with `openworker__`
 * (`openworker__shell`, `openworker_`), the aliases of `openworker`'s own tools (N2). Throws an {@link OpenWorkerError} coded `NAMESPACE_INVALID` or
 * `NAMESPACE_RESERVED`.
 *
 * @example
 * ```ts
 * validateNamespace("acer"); // ok
 * ```
 */
export function validateNamespace(namespace: string): void {
  if (typeof namespace !== "string" || namespace.length === 0) {
    throw new OpenWorkerError("NAMESPACE_INVALID", "namespace must be a non-empty string", { details: { namespace } });
  }
  if (!NAMESPACE_CHARACTERS.test(namespace)) {
    throw new OpenWorkerError("NAMESPACE_INVALID", `namespace ${JSON.stringify(namespace)} may only use ASCII letters, digits, "_" and "-"`, {
      details: { namespace },
    });
  }
  const lower = namespace.toLowerCase();
  if (lower === RESERVED_NAMESPACE) {
    throw new OpenWorkerError("NAMESPACE_RESERVED", `namespace ${JSON.stringify(namespace)} is reserved for OpenWorker itself; choose your own namespace`, {
      details: { namespace },
    });
  }
  // The model sees only aliases (N2): every alias of namespace `openworker__shell` (or
  // `openworker_`) starts with `openworker__`, where the reserved names' aliases live, so
  // `openworker__shell.run` would be `openworker__shell__run`, the alias of `openworker.shell.run`.
  if (`${lower}__`.startsWith(RESERVED_ALIAS_PREFIX)) {
    throw new OpenWorkerError(
      "NAMESPACE_RESERVED",
      `namespace ${JSON.stringify(namespace)} is reserved: its tools' model aliases (${JSON.stringify(`${namespace}__…`)}) fall among the ` +
        `${JSON.stringify(`${RESERVED_ALIAS_PREFIX}…`)} aliases of OpenWorker's own tools, which a model could not tell apart; choose your own namespace`,
      { details: { namespace } },
    );
  }
}

/**
 * Validates a qualified name against every rule that can be checked on the name alone
 * (N1, N3, N4) and returns it split. Throws an {@link OpenWorkerError} with one of the
 * codes `NAME_EMPTY`, `NAME_INVALID_CHARACTER`, `NAME_NOT_QUALIFIED`,
 * `NAMESPACE_INVALID`, `NAMESPACE_RESERVED`, `NAME_TOO_LONG`, `ALIAS_TOO_LONG`.
 *
 * @example
 * ```ts
 * validateQualifiedName("example.web_search"); // { namespace: "example", tool: "web_search" }
 * ```
 */
export function validateQualifiedName(name: string): QualifiedName {
  if (typeof name !== "string" || name.length === 0) {
    throw new OpenWorkerError("NAME_EMPTY", 'tool name must be a non-empty string like "example.web_search"', {
      details: { name },
    });
  }
  if (!NAME_CHARACTERS.test(name)) {
    const bad = [...name].find((character) => !NAME_CHARACTERS.test(character));
    throw new OpenWorkerError(
      "NAME_INVALID_CHARACTER",
      `tool name ${JSON.stringify(name)} contains ${JSON.stringify(bad)}; names use only ASCII letters, digits, "_", "-" and "."`,
      { details: { name, character: bad } },
    );
  }
  const dot = name.indexOf(".");
  if (dot <= 0 || dot === name.length - 1) {
    throw new OpenWorkerError(
      "NAME_NOT_QUALIFIED",
      `tool name ${JSON.stringify(name)} must be qualified as "namespace.tool" with both parts non-empty${aliasLike(name)}`,
      { details: { name } },
    );
  }
  const parts: QualifiedName = { namespace: name.slice(0, dot), tool: name.slice(dot + 1) };
  validateNamespace(parts.namespace);
  if (name.length > LIMITS.nameBytes) {
    throw new OpenWorkerError("NAME_TOO_LONG", `tool name ${JSON.stringify(name)} is ${name.length} bytes; names must fit ${LIMITS.nameBytes} bytes`, {
      details: { name, bytes: name.length, limit: LIMITS.nameBytes },
    });
  }
  const alias = modelAlias(name);
  if (alias.length > LIMITS.nameBytes) {
    throw new OpenWorkerError(
      "ALIAS_TOO_LONG",
      `model alias ${JSON.stringify(alias)} of tool ${JSON.stringify(name)} is ${alias.length} bytes; ` +
        `each "." adds a byte in the alias, and aliases must fit ${LIMITS.nameBytes} bytes`,
      { details: { name, alias, bytes: alias.length, limit: LIMITS.nameBytes } },
    );
  }
  return parts;
}

/**
 * Splits a qualified name at its first dot (N1) after validating it.
 *
 * @example
 * ```ts
 * parseQualifiedName("acer.acer_care_center_batterystatus_get").tool; // "acer_care_center_batterystatus_get"
 * ```
 */
export function parseQualifiedName(name: string): QualifiedName {
  return validateQualifiedName(name);
}

/**
 * For a name with no dot that reads as a model alias (`shipping__track`), the hint that
 * the qualified name is wanted, and which one it would be. Empty otherwise.
 */
function aliasLike(name: string): string {
  const at = name.indexOf("__");
  if (name.includes(".") || at <= 0 || at + 2 >= name.length) return "";
  return `; "${name}" looks like a model alias: its qualified name is "${name.slice(0, at)}.${name.slice(at + 2)}"`;
}
