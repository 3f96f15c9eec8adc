import { jsonSyntaxProblem } from "@openworker/registry/internal";
import type { JsonValue } from "@openworker/tools-sdk";
import { OpenWorkerError, SDK_ERROR_CODES } from "@openworker/tools-sdk";
import { choiceOption, stringOption, type CommandContext, type CommandSpec } from "../cli/command.js";
import { CALL_NAME_REASON, CLI_ERROR_CODES, EXIT_CODES } from "../cli/errors.js";
import { terminalApprover, type ApproveMode } from "../setup/approver.js";
import { terminalElicitor } from "../setup/elicitor.js";
import { assertSelected, loadBundleDir, singleToolBundle } from "../setup/bundle.js";
import { LineReader } from "../setup/lines.js";
import { readPolicyFile } from "../setup/policy.js";
import { openRuntime } from "../setup/runtime.js";
import { printCallOutcome, progressPrinter } from "../setup/transcript.js";
import { SESSION_OPTIONS } from "./options.js";

/** `call`: one tool call through the full pipeline (validation, approval, journal, limits). */
export const callCommand: CommandSpec = {
  words: ["call"],
  summary: "Call one tool through the full pipeline: validation, approval, journal, limits",
  usage: "<qualified-name> [--args JSON] [--bundle DIR] [--policy FILE] [--approve ask|yes|no] [--json]",
  positionals: { min: 1, max: 1 },
  options: {
    args: { type: "string", value: "JSON", description: "the arguments, one JSON object (default {})" },
    bundle: {
      type: "string",
      value: "DIR",
      description: "call as this bundle's coworker (the tool must be selected); default: a bundle selecting only this tool",
    },
    ...SESSION_OPTIONS,
    json: { type: "boolean", description: "print the call report as JSON" },
  },
  details:
    "Opens a session (journaled, with its execution identity), validates the arguments against the tool's\n" +
    "schema, asks for approval as the policy says, runs the tool within the limits and journals every\n" +
    "step. Exit 0 when the call succeeded, 1 otherwise; Ctrl-C cancels the call (exit 130).",
  async run(context) {
    const name = context.positionals[0]!;
    if (name.trim() === "") {
      throw new OpenWorkerError(
        SDK_ERROR_CODES.NAME_EMPTY,
        `call: the tool name is empty; give the qualified name of a tool, such as "example.web_search" (\`${context.program} tools list\` shows them)`,
      );
    }
    const args = parseArgsOption(stringOption(context, "args"));
    const mode = choiceOption<ApproveMode>(context, "approve", "ask");
    const policyFile = stringOption(context, "policy");
    const policy = policyFile === undefined ? {} : await readPolicyFile(policyFile);
    const bundleDir = stringOption(context, "bundle");
    if (bundleDir === undefined) assertNotAnAlias(context, name);
    const bundle = bundleDir === undefined ? await singleToolBundle(name, context.globals.workspace) : await loadBundleDir(bundleDir);
    if (bundleDir !== undefined) assertSelected(bundle, name);

    let reader: LineReader | undefined;
    const prompter = context.stdin.isTTY ? () => (reader ??= new LineReader(context.stdin, process.stderr)) : undefined;
    const runtime = await openRuntime(context, {
      approver: terminalApprover(mode, context.terminal, prompter),
      elicitor: terminalElicitor(context.terminal, prompter),
      authorizeDuringCalls: prompter !== undefined,
      needsModel: false,
    });
    try {
      const session = await runtime
        .openSession({ bundle, policy })
        .catch((error: unknown) => Promise.reject(bundleDir === undefined ? asNameProblem(error, bundle.dir) : error));
      if (!context.terminal.json) session.subscribe(progressPrinter(context.terminal));
      const report = await session
        .callTool(name, args, { signal: context.signal })
        .catch((error: unknown) => Promise.reject(bundleDir === undefined ? asNameProblem(error, bundle.dir) : error));
      await runtime.journal.flush();
      if (context.terminal.json) {
        const { images: _images, ...rest } = report;
        context.terminal.printJson({ sessionId: session.id, ...rest });
      } else {
        context.terminal.line(`${context.terminal.paint("cyan", "call")} ${name} ${argumentsText(args)} (session ${session.id})`);
        printCallOutcome(context.terminal, report);
        if (report.outcome === "succeeded") context.terminal.line(JSON.stringify(report.json ?? null, null, 2));
      }
      // Stopped from outside (README "Stopping"): the cancelled call's report is shown, and the
      // command still ends as every stopped command does, `error CLI_INTERRUPTED: …`.
      if (context.signal.aborted) throw context.signal.reason;
      return report.outcome === "succeeded" ? EXIT_CODES.ok : EXIT_CODES.failed;
    } finally {
      reader?.close();
      await runtime.close();
    }
  },
};

/**
 * Without `--bundle`, the name is the selection: a registered native tool's model alias
 * (`example__web_search`) is named as such instead of only "not qualified". MCP tools'
 * names are known only after discovery, so they get the plain error.
 */
function assertNotAnAlias(context: CommandContext, name: string): void {
  if (name.includes(".")) return;
  const meant = context.registry.natives().find((tool) => tool.alias === name);
  if (meant === undefined) return;
  throw new OpenWorkerError(
    SDK_ERROR_CODES.NAME_NOT_QUALIFIED,
    `tool name ${JSON.stringify(name)} is not qualified; did you mean ${JSON.stringify(meant.name)}? (${name} is its model alias; call takes the qualified name)`,
  );
}

/**
 * Without `--bundle` the selection is the name given, held in no file: a resolver error
 * about it (`bundle DIR: tools.json: field "tools[0]": tool "x.y": …`) is told of the name,
 * as `call: tool "x.y": …`, with a hint at the registered tools instead of at `tools check --bundle`.
 */
function asNameProblem(error: unknown, dir: string): unknown {
  if (!OpenWorkerError.isInstance(error)) return error;
  let message = error.message;
  if (message.startsWith(`bundle ${dir}: `)) message = message.slice(`bundle ${dir}: `.length);
  const field = `tools.json: field "tools[0]": `;
  if (!message.startsWith(field)) return error;
  return new OpenWorkerError(error.code, `call: ${message.slice(field.length)}`, { cause: error, details: { ...error.details, reason: CALL_NAME_REASON } });
}

/** The arguments as the call's header shows them; arguments too deep for `JSON.stringify` were refused by the call (E5). */
function argumentsText(args: JsonValue): string {
  try {
    return JSON.stringify(args);
  } catch {
    return "(arguments too deeply nested to show)";
  }
}

function parseArgsOption(text: string | undefined): JsonValue {
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as JsonValue;
  } catch (cause) {
    throw new OpenWorkerError(CLI_ERROR_CODES.ARGUMENTS_INVALID, `--args is not JSON, ${jsonSyntaxProblem(text, cause)}`, { cause });
  }
}
