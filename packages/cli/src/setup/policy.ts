import { checkApprovalPolicy, type ApprovalPolicy } from "@openworker/runtime/policy";
import { CLI_ERROR_CODES } from "../cli/errors.js";
import { readJsonFile } from "./files.js";

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
 * Checks a parsed policy with the runtime's own check (`checkApprovalPolicy`, from the
 * light `@openworker/runtime/policy` entry: `--help` loads no runtime); each problem
 * names the file and the field, coded `CLI_POLICY_INVALID`.
 *
 * @example
 * ```ts
 * parsePolicy({ rules: { external: "ask" } }, "policy.json"); // { rules: { external: "ask" } }
 * ```
 */
export function parsePolicy(value: unknown, file: string): ApprovalPolicy {
  return checkApprovalPolicy(value, { code: CLI_ERROR_CODES.POLICY_INVALID, source: file });
}
