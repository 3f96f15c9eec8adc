import type { ApprovalAnswer, ApprovalRequest, Approver } from "@openworker/runtime";
import { clip, type Terminal } from "../cli/terminal.js";

/** How approvals the policy leaves to a person are answered (`--approve`). */
export type ApproveMode = "yes" | "no" | "ask";

/** Asks one question on the terminal; `undefined` when the input closed or the question was abandoned. */
export interface Prompter {
  question(text: string, signal: AbortSignal): Promise<string | undefined>;
}

/**
 * The approver of a terminal command. `yes`/`no` decide for scripts (journaled as decided
 * by policy, `who` = `cli --approve yes|no`: a flag is not a person); `ask` asks on the
 * terminal, and fails closed (denies, by policy, `who` = `cli`) when there is no terminal
 * to ask or its input ends before an answer: nobody decided.
 */
export function terminalApprover(mode: ApproveMode, terminal: Terminal, prompter: (() => Prompter) | undefined): Approver {
  if (mode !== "ask") {
    return (request) => {
      terminal.note(terminal.paint("dim", `approval: ${request.qualifiedName} ${mode === "yes" ? "granted" : "denied"} by --approve ${mode}`));
      return { approved: mode === "yes", decidedBy: "policy", who: `cli --approve ${mode}`, ...(mode === "no" ? { reason: "denied by --approve no" } : {}) };
    };
  }
  if (!prompter) {
    return () => ({ approved: false, decidedBy: "policy", who: "cli", reason: "no terminal to ask; pass --approve yes or --approve no" });
  }
  return async (request: ApprovalRequest): Promise<ApprovalAnswer> => {
    const question =
      `${terminal.paint("yellow", "approve")} ${terminal.paint("bold", request.qualifiedName)} ` +
      `(${request.kind}, ${request.classification}) ${clip(JSON.stringify(request.args), 200)}\n` +
      `  [y] once  [s] remember for this coworker, policy and host  [N] no: `;
    const answer = (await prompter().question(terminal.promptText(question), request.signal))?.trim().toLowerCase();
    if (answer === undefined) {
      // Abandoned (the runtime already decided, and ignores this) or stdin ended (Ctrl-D, EOF): no person answered.
      const reason = request.signal.aborted
        ? "the approval was abandoned before an answer"
        : "stdin ended before an answer; pass --approve yes or --approve no";
      return { approved: false, decidedBy: "policy", who: "cli", reason };
    }
    if (answer === "y" || answer === "yes") return { approved: true, scope: "once", who: "terminal user" };
    if (answer === "s" || answer === "session") return { approved: true, scope: "session", who: "terminal user" };
    return { approved: false, who: "terminal user", reason: "denied at the terminal" };
  };
}
