import type { JsonValue } from "@openworker/tools-sdk";

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

/** The classification and rule of one tool under a policy. */
export function classify(policy: ApprovalPolicy, qualifiedName: string): { classification: string; decision: PolicyDecision } {
  const classification = policy.classifications?.[qualifiedName] ?? DEFAULT_CLASSIFICATION;
  return { classification, decision: policy.rules?.[classification] ?? "ask" };
}
