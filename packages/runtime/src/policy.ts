import { OpenWorkerError, type JsonValue } from "@openworker/tools-sdk";

/** What a policy rule decides for a classification. */
export type PolicyDecision = "ask" | "allow" | "deny";

/** The classification every tool has unless the host's policy says otherwise (A1). */
export const DEFAULT_CLASSIFICATION = "external";

/**
 * A session's approval policy (A1, A4). Classification changes approval rules only: it
 * never changes where a tool runs (native tools always run in the host process).
 *
 * @example
 * ```ts
 * const policy: ApprovalPolicy = {
 *   name: "demo",
 *   classifications: { "example.web_search": "read_only" },
 *   rules: { read_only: "allow", external: "ask" },
 * };
 * ```
 */
export interface ApprovalPolicy {
  /** Recorded as the deciding policy in the journal. Default `"default"`. */
  readonly name?: string;
  /** `bypass` skips the human step only: rules that deny still deny, and limits, validation and journaling still apply. */
  readonly mode?: "normal" | "bypass";
  /** Qualified name → classification. Unlisted tools are `external`. */
  readonly classifications?: Readonly<Record<string, string>>;
  /** Classification → decision. Default: every classification asks a person. */
  readonly rules?: Readonly<Record<string, PolicyDecision>>;
}

/** What the runtime asks the host's approver (a person behind a UI, a terminal prompt…). */
export interface ApprovalRequest {
  readonly sessionId: string;
  readonly turnId: string;
  readonly callId: string;
  readonly qualifiedName: string;
  readonly alias: string;
  readonly kind: "native" | "mcp";
  readonly classification: string;
  readonly args: JsonValue;
  /** Aborted when the turn is cancelled or the decision times out. */
  readonly signal: AbortSignal;
}

/** A person's answer. `scope: "session"` remembers it for this execution identity and schema. */
export interface ApprovalAnswer {
  readonly approved: boolean;
  readonly scope?: "once" | "session";
  /** Who decided, for the journal. */
  readonly who?: string;
  /**
   * What decided: a person (default), or an automated rule standing in for one (a
   * command-line `--approve yes`, a test host). Journaled as the decider.
   */
  readonly decidedBy?: "person" | "policy";
  readonly reason?: string;
}

/** The host's approver callback. Any error, timeout or abort counts as denied (fail closed). */
export type Approver = (request: ApprovalRequest) => Promise<ApprovalAnswer> | ApprovalAnswer;

/** The policy as it enters the execution identity: plain JSON with defaults applied. */
export function policyForIdentity(policy: ApprovalPolicy): JsonValue {
  return {
    name: policy.name ?? "default",
    mode: policy.mode ?? "normal",
    classifications: { ...policy.classifications },
    rules: { ...policy.rules },
  };
}

/**
 * The classification and rule of one tool under a policy. Own keys only: a classification
 * named `toString` or `constructor` finds no rule on `Object.prototype`.
 */
export function classify(policy: ApprovalPolicy, qualifiedName: string): { classification: string; decision: PolicyDecision } {
  const { classifications, rules } = policy;
  const classification =
    classifications !== undefined && Object.hasOwn(classifications, qualifiedName) ? classifications[qualifiedName]! : DEFAULT_CLASSIFICATION;
  return { classification, decision: rules !== undefined && Object.hasOwn(rules, classification) ? rules[classification]! : "ask" };
}

const DECISIONS: ReadonlySet<string> = new Set(["ask", "allow", "deny"]);
const POLICY_FIELDS = ["name", "mode", "classifications", "rules"];

/**
 * Checks a policy field by field and returns a frozen, plain copy; each problem names the
 * field. `Runtime.openSession` checks the policy it is given, and the CLI its `--policy`
 * file, with this one function: a rule that is not exactly `"ask"`, `"allow"` or `"deny"`
 * (`"Deny"`, `" deny"`) would otherwise fall to "ask", which bypass mode approves, so a
 * misspelt deny rule failed open. `code` and `source` shape the error
 * (`OPTIONS_INVALID`, `policy: …` by default).
 *
 * @example
 * ```ts
 * checkApprovalPolicy({ rules: { external: "ask" } }); // { rules: { external: "ask" } }
 * checkApprovalPolicy({ rules: { external: "Deny" } }); // throws OPTIONS_INVALID: policy: rules.external must be "ask", "allow" or "deny", got "Deny"
 * ```
 */
export function checkApprovalPolicy(value: unknown, options: { code?: string; source?: string } = {}): ApprovalPolicy {
  const source = options.source ?? "policy";
  const fail = (problem: string) => new OpenWorkerError(options.code ?? "OPTIONS_INVALID", `${source}: ${problem}`, { details: { option: "policy" } });
  if (!isPlainObject(value)) throw fail("must be an object with name, mode, classifications and rules");
  const unknown = Object.keys(value).filter((key) => !POLICY_FIELDS.includes(key) && value[key] !== undefined);
  if (unknown.length > 0) throw fail(`unknown field ${JSON.stringify(unknown[0])} (allowed: ${POLICY_FIELDS.join(", ")})`);
  if (value.name !== undefined && (typeof value.name !== "string" || value.name === "")) throw fail(`"name" must be a non-empty string`);
  if (value.mode !== undefined && value.mode !== "normal" && value.mode !== "bypass")
    throw fail(`"mode" must be "normal" or "bypass", got ${JSON.stringify(value.mode)}`);
  const strings = (field: "classifications" | "rules", check: (entry: string) => boolean, expected: string): Record<string, string> | undefined => {
    const map = value[field];
    if (map === undefined) return undefined;
    if (!isPlainObject(map)) throw fail(`"${field}" must be an object`);
    const copy: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [key, entry] of Object.entries(map)) {
      if (typeof entry !== "string" || !check(entry)) throw fail(`${field}.${key} must be ${expected}, got ${JSON.stringify(entry)}`);
      copy[key] = entry;
    }
    return Object.freeze(copy);
  };
  const classifications = strings("classifications", (entry) => entry.length > 0, "a classification name");
  const rules = strings("rules", (entry) => DECISIONS.has(entry), `"ask", "allow" or "deny"`) as ApprovalPolicy["rules"];
  for (const name of Object.keys(classifications ?? {})) {
    const dot = name.indexOf(".");
    if (dot <= 0 || dot === name.length - 1) {
      throw fail(
        `classifications: ${JSON.stringify(name)} is not a qualified tool name (namespace.tool); policies name tools as bundles do, not by model alias`,
      );
    }
  }
  // A class no rule names is asked like `external`, the default: with rules given, that is a typo (read-only for read_only).
  if (classifications && rules) {
    for (const [name, classification] of Object.entries(classifications)) {
      if (classification !== DEFAULT_CLASSIFICATION && !Object.hasOwn(rules, classification)) {
        throw fail(
          `classifications[${JSON.stringify(name)}] is ${JSON.stringify(classification)}, which no rule names (rules: ${Object.keys(rules).join(", ") || "none"}); add a rule for it or fix the name`,
        );
      }
    }
  }
  return Object.freeze({
    ...(value.name !== undefined ? { name: value.name as string } : {}),
    ...(value.mode !== undefined ? { mode: value.mode as "normal" | "bypass" } : {}),
    ...(classifications ? { classifications } : {}),
    ...(rules ? { rules } : {}),
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
