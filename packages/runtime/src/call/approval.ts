import type { ApprovalKey } from "@openworker/journal";
import { providerFingerprint, type ResolvedTool } from "@openworker/bundle-resolver";
import type { JsonValue } from "@openworker/tools-sdk";
import { sha256Hex } from "@openworker/tools-sdk/internal/validation";
import { classify, type ApprovalAnswer } from "../policy.js";
import type { CallEnvironment } from "./environment.js";
import { clip, messageOf } from "../describe.js";

/** The approval step's verdict, as journaled. */
export interface ApprovalVerdict {
  readonly approved: boolean;
  readonly by: "person" | "policy" | "bypass";
  readonly who?: string;
  readonly scope: "once" | "session";
  readonly key: string;
  readonly reason?: string;
}

/**
 * The verdict a tool gets with no person involved (A1), or `undefined` when a person
 * decides (or a remembered approval stands in). The policy classifies the tool (External
 * by default) and its rule says allow, deny or ask; `ask` is skipped by bypass mode (and
 * only `ask`: a deny rule still denies). A session's policy is fixed when it opens, so
 * the verdict is made once per selected tool and kept in `environment.verdicts`.
 */
export function standingVerdict(environment: CallEnvironment, resolved: ResolvedTool): ApprovalVerdict | undefined {
  const known = environment.verdicts.get(resolved);
  if (known !== undefined) return known ?? undefined;
  const keyText = keyTextOf(environment, resolved);
  const policyName = environment.policy.name ?? "default";
  const { classification, decision } = classify(environment.policy, resolved.qualifiedName);
  let verdict: ApprovalVerdict | undefined;
  if (decision === "deny") {
    verdict = { approved: false, by: "policy", who: policyName, scope: "once", key: keyText, reason: `policy denies ${classification} tools` };
  } else if (decision === "allow") {
    verdict = { approved: true, by: "policy", who: policyName, scope: "once", key: keyText, reason: `policy allows ${classification} tools` };
  } else if (environment.policy.mode === "bypass") {
    verdict = { approved: true, by: "bypass", who: policyName, scope: "once", key: keyText };
  }
  environment.verdicts.set(resolved, verdict ?? null);
  return verdict;
}

/**
 * Decides the approval of a call whose tool asks a person (A1, A2, M3): a remembered
 * approval under (execution identity, tool, schema fingerprint) answers, else the host's
 * approver is asked. Any error, timeout or abort while deciding is a denial: fail closed.
 */
export async function decideApproval(
  environment: CallEnvironment,
  resolved: ResolvedTool,
  args: JsonValue,
  call: { turnId: string; callId: string; signal: AbortSignal },
): Promise<ApprovalVerdict> {
  const key: ApprovalKey = {
    executionIdentity: environment.executionIdentity,
    qualifiedName: resolved.qualifiedName,
    schemaFingerprint: approvalFingerprint(resolved),
  };
  const keyText = keyTextOf(environment, resolved);
  // A shared store (a fleet's PostgreSQL journal) answers asynchronously.
  const remembered = await environment.journal.findApproval(key);
  if (remembered) {
    return {
      approved: true,
      by: remembered.by,
      // Stored redacted since E6 covered `who`; an approval stored before that is redacted here.
      ...(remembered.who ? { who: environment.redactor.text(remembered.who) } : {}),
      scope: "session",
      key: keyText,
      reason: "remembered for this execution identity and schema",
    };
  }
  if (!environment.approver) {
    const who = environment.policy.name ?? "default";
    return { approved: false, by: "policy", who, scope: "once", key: keyText, reason: "no approver is configured to ask a person" };
  }
  environment.events.emit({
    type: "approval_needed",
    sessionId: environment.sessionId,
    turnId: call.turnId,
    callId: call.callId,
    qualifiedName: resolved.qualifiedName,
  });
  const { classification } = classify(environment.policy, resolved.qualifiedName);
  const answer = await askApprover(environment, resolved, args, call, classification);
  const by = answer.decidedBy === "policy" ? "policy" : "person";
  // The host's text, journaled and reported: a `who` naming a token ("ana (token sk-…)") is redacted like any other (E6).
  const who = answer.who ? environment.redactor.text(answer.who) : undefined;
  if (answer.approved && answer.scope === "session") {
    await environment.journal.storeApproval(key, { scope: "session", by, ...(who ? { who } : {}) });
  }
  return {
    approved: answer.approved,
    by,
    ...(who ? { who } : {}),
    scope: answer.scope ?? "once",
    key: keyText,
    ...(answer.reason ? { reason: answer.reason } : {}),
  };
}

/** The approval key as the journal records it: identity, tool and the fingerprint approvals bind to. */
function keyTextOf(environment: CallEnvironment, resolved: ResolvedTool): string {
  return `${environment.executionIdentity} ${resolved.qualifiedName} ${approvalFingerprint(resolved)}`;
}

/**
 * What a remembered approval is bound to besides the execution identity (M3). A native
 * tool: its input schema's fingerprint (its whole descriptor is pinned by the identity,
 * A2). An MCP tool: its catalog entry's fingerprint, which covers its description, input
 * and output schemas and annotations (a server that rewrites what a tool says it does,
 * "Harmless." → "Deletes every file", asks again, not only one that changes its schema),
 * joined with its provider's launch definition (A2: a provider started from another
 * program, or reached at another URL, with the same catalog asks again).
 */
export function approvalFingerprint(resolved: ResolvedTool): string {
  if (resolved.kind === "native") return resolved.schemaFingerprint;
  let fingerprint = mcpFingerprints.get(resolved);
  if (fingerprint === undefined) {
    fingerprint = `sha256:${sha256Hex(`${resolved.catalogFingerprint} ${providerFingerprint(resolved.provider)}`)}`;
    mcpFingerprints.set(resolved, fingerprint);
  }
  return fingerprint;
}

const mcpFingerprints = new WeakMap<ResolvedTool, string>();

async function askApprover(
  environment: CallEnvironment,
  resolved: ResolvedTool,
  args: JsonValue,
  call: { turnId: string; callId: string; signal: AbortSignal },
  classification: string,
): Promise<ApprovalAnswer> {
  // A cancelled turn asks nobody: its listener below would never fire on a signal that is
  // already aborted, and the approver would be asked with a live signal.
  if (call.signal.aborted) return failClosed("the turn was cancelled");
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  // One listener on the caller's signal, removed however the wait ends: a host call's
  // signal is its session's, which lives as long as the session (one listener left per
  // asked call grew the heap by about 2 KB a call).
  let onCancel: (() => void) | undefined;
  try {
    const timeout = new Promise<ApprovalAnswer>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve(failClosed(`no decision within ${environment.approvalTimeoutMs} ms`));
      }, environment.approvalTimeoutMs);
    });
    const aborted = new Promise<ApprovalAnswer>((resolve) => {
      onCancel = () => {
        controller.abort();
        resolve(failClosed("the turn was cancelled"));
      };
      call.signal.addEventListener("abort", onCancel, { once: true });
    });
    const asked = Promise.resolve()
      .then(() =>
        environment.approver!({
          sessionId: environment.sessionId,
          turnId: call.turnId,
          callId: call.callId,
          qualifiedName: resolved.qualifiedName,
          alias: resolved.alias,
          kind: resolved.kind,
          classification,
          // A copy, frozen: what the tool runs with was validated, and an approver that
          // edits what it is shown must not change it (E5).
          args: frozenCopy(args),
          signal: controller.signal,
        }),
      )
      .then(readAnswer)
      .then(undefined, (error: unknown): ApprovalAnswer => failClosed(`the approver failed: ${messageOf(error)}`));
    return await Promise.race([asked, timeout, aborted]);
  } finally {
    clearTimeout(timer);
    if (onCancel) call.signal.removeEventListener("abort", onCancel);
  }
}

/** A deep copy of JSON arguments, frozen at every level (`structuredClone` keeps an own `__proto__` key as data). */
function frozenCopy(value: JsonValue): JsonValue {
  return deepFreeze(structuredClone(value));
}

function deepFreeze(value: JsonValue): JsonValue {
  if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * A denial nobody decided: no answer in time, a cancelled turn, a failing approver. It is
 * journaled as the runtime's fail-closed rule (`by: "policy"`, `who: "runtime (fail
 * closed)"`), not as a person's decision (A1, A3: by whom or which policy).
 */
function failClosed(reason: string): ApprovalAnswer {
  return { approved: false, decidedBy: "policy", who: "runtime (fail closed)", reason };
}

/**
 * The approver's answer as a fresh plain object, each field read once and checked: what
 * is journaled and acted on cannot change under a getter, and a getter that throws makes
 * the answer a denial (fail closed), with the call still getting its decision record.
 */
function readAnswer(answer: unknown): ApprovalAnswer {
  // Nobody decided (a forgotten `return`, a bare `true` or `"yes"`): the runtime's fail-closed rule, not a person (A1, A3).
  if (typeof answer !== "object" || answer === null)
    return failClosed(`the approver did not answer with an object {approved, scope?, who?, reason?} (it answered ${describeAnswer(answer)})`);
  const source = answer as Record<string, unknown>;
  const approved = source.approved === true;
  const scope = source.scope;
  const who = source.who;
  const decidedBy = source.decidedBy;
  const reason = source.reason;
  return {
    approved,
    ...(approved && (scope === "session" || scope === "once") ? { scope } : {}),
    ...(typeof who === "string" && who !== "" ? { who: clip(who, MAX_ANSWER_TEXT) } : {}),
    ...(decidedBy === "policy" || decidedBy === "person" ? { decidedBy } : {}),
    ...(typeof reason === "string" && reason !== "" ? { reason: clip(reason, MAX_ANSWER_TEXT) } : approved ? {} : { reason: "denied" }),
  };
}

/** What a non-object answer was, for the denial's reason: its type, and a short value for a primitive. */
function describeAnswer(answer: unknown): string {
  if (answer === undefined || answer === null) return String(answer);
  if (typeof answer === "string") return `the string ${JSON.stringify(clip(answer, 40))}`;
  if (typeof answer === "function" || typeof answer === "symbol") return `a ${typeof answer}`;
  return `${typeof answer} ${String(answer)}`;
}

/** Answers are journaled: a host's runaway `who` or `reason` is clipped, not stored whole. */
const MAX_ANSWER_TEXT = 1_000;
