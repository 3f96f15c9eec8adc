import type { ApprovalPolicy } from "@openworker/runtime";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { CLI_ERROR_CODES } from "../cli/errors.js";
import { isObject, readJsonFile } from "./files.js";

const DECISIONS = new Set(["ask", "allow", "deny"]);

/**
 * Reads a `--policy` file: the runtime's `ApprovalPolicy` as JSON, e.g.
 * `{"name":"demo","classifications":{"example.web_search":"read_only"},"rules":{"read_only":"allow","external":"ask"}}`.
 * The policy is part of the session's execution identity (A2).
 *
 * @example
 * ```ts
 * const policy = await readPolicyFile("examples/coworker/demo/policy.json");
 * ```
 */
export async function readPolicyFile(file: string): Promise<ApprovalPolicy> {
  return parsePolicy(await readJsonFile(file, "CLI_POLICY"), file);
}

/**
 * Checks a parsed policy; each problem names the field.
 *
 * @example
 * ```ts
 * parsePolicy({ rules: { external: "ask" } }, "policy.json"); // { rules: { external: "ask" } }
 * ```
 */
export function parsePolicy(value: unknown, file: string): ApprovalPolicy {
  const fail = (problem: string) => new OpenWorkerError(CLI_ERROR_CODES.POLICY_INVALID, `${file}: ${problem}`, { details: { file } });
  if (!isObject(value)) throw fail("must be a JSON object with name, mode, classifications and rules");
  const unknown = Object.keys(value).filter((key) => !["name", "mode", "classifications", "rules"].includes(key));
  if (unknown.length > 0) throw fail(`unknown field ${JSON.stringify(unknown[0])} (allowed: name, mode, classifications, rules)`);
  if (value.name !== undefined && (typeof value.name !== "string" || value.name === "")) throw fail(`"name" must be a non-empty string`);
  if (value.mode !== undefined && value.mode !== "normal" && value.mode !== "bypass") throw fail(`"mode" must be "normal" or "bypass"`);
  const strings = (field: "classifications" | "rules", check: (entry: string) => boolean, expected: string): Record<string, string> | undefined => {
    const map = value[field];
    if (map === undefined) return undefined;
    if (!isObject(map)) throw fail(`"${field}" must be an object`);
    for (const [key, entry] of Object.entries(map)) {
      if (typeof entry !== "string" || !check(entry)) throw fail(`${field}.${key} must be ${expected}, got ${JSON.stringify(entry)}`);
    }
    return map as Record<string, string>;
  };
  const classifications = strings("classifications", (entry) => entry.length > 0, "a classification name");
  const rules = strings("rules", (entry) => DECISIONS.has(entry), `"ask", "allow" or "deny"`) as ApprovalPolicy["rules"];
  for (const name of Object.keys(classifications ?? {})) {
    const dot = name.indexOf(".");
    if (dot <= 0 || dot === name.length - 1) throw fail(`classifications: ${JSON.stringify(name)} is not a qualified tool name (namespace.tool)`);
  }
  // A class no rule names is asked like `external`, the default: with rules given, that is a typo (read-only for read_only).
  if (classifications && rules) {
    for (const [name, classification] of Object.entries(classifications)) {
      if (classification !== "external" && !(classification in rules)) {
        throw fail(
          `classifications[${JSON.stringify(name)}] is ${JSON.stringify(classification)}, which no rule names (rules: ${Object.keys(rules).join(", ") || "none"}); add a rule for it or fix the name`,
        );
      }
    }
  }
  return {
    ...(value.name !== undefined ? { name: value.name as string } : {}),
    ...(value.mode !== undefined ? { mode: value.mode as "normal" | "bypass" } : {}),
    ...(classifications ? { classifications } : {}),
    ...(rules ? { rules } : {}),
  };
}
