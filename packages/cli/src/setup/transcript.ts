import type { CallReport, ModelMessage, RuntimeEvent, RuntimeEventListener, TurnResult } from "@openworker/runtime";
import { clip, type Terminal } from "../cli/terminal.js";

/**
 * Progress lines for a terminal (stderr): approvals asked, calls running, their progress
 * and outcome, diagnostics. Results go to stdout separately.
 */
export function progressPrinter(terminal: Terminal): RuntimeEventListener {
  return (event: RuntimeEvent) => {
    switch (event.type) {
      case "approval_needed":
        terminal.note(terminal.paint("yellow", `? ${event.qualifiedName} needs approval`));
        break;
      case "call_started":
        terminal.note(terminal.paint("dim", `… ${event.qualifiedName} running`));
        break;
      case "call_progress": {
        const { message, progress, total } = event.event;
        const amount = progress === undefined ? "" : ` ${progress}${total === undefined ? "" : `/${total}`}`;
        terminal.note(terminal.paint("dim", `  ${clip(message ?? "progress", 120)}${amount}`));
        break;
      }
      case "call_finished":
        terminal.note(
          event.outcome === "succeeded"
            ? terminal.paint("green", `✓ ${event.qualifiedName} succeeded`)
            : terminal.paint("red", `✗ ${event.qualifiedName} ${event.outcome}${event.code ? ` ${event.code}` : ""}`),
        );
        break;
      case "diagnostic":
        terminal.note(terminal.paint("yellow", `! ${event.code}: ${clip(event.message, 200)}`));
        break;
      default:
        break;
    }
  };
}

/**
 * Prints one turn as a transcript (stdout): the user's message, the model's text, each
 * tool call with its arguments, who approved it and its outcome (from the call reports),
 * then how the turn ended. `qualifiedNameOf` names a call by its model alias where there is
 * no report to name it.
 */
export function printTurn(
  terminal: Terminal,
  messages: readonly ModelMessage[],
  result: TurnResult,
  qualifiedNameOf: (alias: string) => string | undefined = () => undefined,
): void {
  // The runtime runs an answer's calls in order and reports each one it ran; a turn that
  // stops (a fault, a cancellation) runs none after that, so the calls left over at the
  // end have no report: they never ran, nothing was journaled for them.
  const calls = [...result.calls];
  for (const message of messages) {
    if (message.role === "user") terminal.line(`${terminal.paint("bold", "user:")} ${message.content}`);
    if (message.role !== "assistant") continue;
    if (message.content) terminal.line(`${terminal.paint("bold", "assistant:")} ${message.content}`);
    for (const toolCall of message.toolCalls) {
      const report = calls.shift();
      const args = typeof toolCall.arguments === "string" ? toolCall.arguments : JSON.stringify(toolCall.arguments);
      terminal.line(`${terminal.paint("cyan", "call")} ${report?.qualifiedName ?? qualifiedNameOf(toolCall.name) ?? toolCall.name} ${clip(args, 200)}`);
      if (report) printCallOutcome(terminal, report);
      else
        terminal.line(
          `  ${terminal.paint("dim", "not run")}: ${result.reason === "cancelled" ? "the turn was cancelled" : "the turn stopped at an earlier call"}`,
        );
    }
  }
  const how = result.completed ? terminal.paint("green", "answered") : terminal.paint("red", result.reason);
  const error = result.error ? ` (${result.error.code}: ${clip(result.error.message, 200)})` : "";
  terminal.line(`turn ${result.turnId}: ${how}, ${result.calls.length} call(s)${error}`);
}

/** The approval and outcome lines of one call. */
export function printCallOutcome(terminal: Terminal, report: CallReport): void {
  // From the report, not the journal: reading a call's timeline walks the whole session,
  // which made every turn of a long session slower than the last.
  const { approval } = report;
  if (approval) {
    const who = approval.who ? ` ${JSON.stringify(approval.who)}` : "";
    const why = approval.reason ? ` (${approval.reason})` : "";
    terminal.line(`  ${approval.approved ? "approved" : "denied"} by ${approval.by}${who}${why}`);
  }
  if (report.outcome === "succeeded") {
    terminal.line(`  ${terminal.paint("green", "succeeded")}: ${clip(JSON.stringify(report.json ?? null), 240)}`);
  } else {
    terminal.line(`  ${terminal.paint("red", report.outcome)} ${report.code ?? ""}: ${clip(report.message ?? report.modelText, 240)}`);
  }
}
