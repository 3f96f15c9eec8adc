import type { Runtime, Session, TurnResult } from "@openworker/runtime";
import { choiceOption, requiredOption, stringOption, type CommandContext, type CommandSpec } from "../cli/command.js";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { CLI_ERROR_CODES, EXIT_CODES, usageError } from "../cli/errors.js";
import { interruptedError } from "../cli/stop-requests.js";
import { terminalApprover, type ApproveMode } from "../setup/approver.js";
import { terminalElicitor } from "../setup/elicitor.js";
import { loadBundleDir, noteUnselectedClassifications } from "../setup/bundle.js";
import { LineReader } from "../setup/lines.js";
import { readPolicyFile } from "../setup/policy.js";
import { openRuntime } from "../setup/runtime.js";
import { turnJson } from "../setup/report-json.js";
import { printTurn, progressPrinter } from "../setup/transcript.js";
import { SCRIPT_OPTION, SESSION_OPTIONS } from "./options.js";

/** `run`: an agent session in the terminal. */
export const runCommand: CommandSpec = {
  words: ["run"],
  summary: "Run an agent session on a bundle: one --message, or an interactive loop",
  usage: "--bundle DIR [--message TEXT [--json]] [--script FILE] [--policy FILE] [--approve ask|yes|no] [--session-id ID]",
  positionals: { min: 0, max: 0 },
  options: {
    bundle: { type: "string", value: "DIR", description: "the coworker bundle" },
    message: { type: "string", value: "TEXT", description: "run one turn with this message, print the transcript and exit" },
    ...SCRIPT_OPTION,
    ...SESSION_OPTIONS,
    "session-id": { type: "string", value: "ID", description: "the session id to journal under (default: a random ses_… id)" },
    json: { type: "boolean", description: "with --message: print the turn's report as JSON instead of the transcript" },
  },
  details:
    "Without --message: a prompt loop. Each line is a turn; approvals, and what an MCP provider asks the user\n" +
    "during a call (a form, a URL to open), are asked on the terminal, and declined without one; progress\n" +
    "lines go to stderr, the transcript to stdout. Ctrl-C cancels the running turn (the runtime revokes the\n" +
    "tools and journals the cancellation; nothing is killed mid-write); a second Ctrl-C, or Ctrl-D at the\n" +
    "prompt, closes the runtime (ending MCP processes, verified) and exits.\n" +
    "With --message: one turn; exit 0 when the model answered, 1 when the turn stopped, 3 when an MCP provider\n" +
    "the bundle selects could not be reached for it (CLI_PROVIDER_UNAVAILABLE), 130 on Ctrl-C, 143 on SIGTERM.\n" +
    "With --json: one JSON document on stdout, {sessionId, turnId, completed, reason, text, calls, unavailableProviders}.\n" +
    "Model: --script FILE (scripted), --provider openai --base-url URL --model NAME [--api-key-env VAR] (an OpenAI-compatible endpoint),\n" +
    "or --provider anthropic|openai-responses --model NAME --api-key-env VAR.",
  async run(context) {
    // Imported here, not at the top: `--help` and the other commands do not load the runtime.
    const { isSessionId, RUNTIME_ERROR_CODES } = await import("@openworker/runtime");
    const sessionId = sessionIdOption(context, isSessionId);
    const bundle = await loadBundleDir(requiredOption(context, "bundle"));
    const message = stringOption(context, "message");
    const mode = choiceOption<ApproveMode>(context, "approve", "ask");
    const policyFile = stringOption(context, "policy");
    const policy = policyFile === undefined ? {} : await readPolicyFile(policyFile);
    if (policyFile !== undefined) noteUnselectedClassifications(context.terminal, bundle, policy, policyFile);
    const interactive = message === undefined;
    const json = context.terminal.json;
    if (json && interactive) throw usageError("run: --json needs --message TEXT (one turn, one JSON report); the interactive loop prints a transcript");

    let reader: LineReader | undefined;
    const lines = () => (reader ??= new LineReader(context.stdin, process.stderr));
    // Approvals are asked where a person is: the terminal, or the input an interactive loop reads anyway.
    const prompter = context.stdin.isTTY || interactive ? lines : undefined;
    const runtime = await openRuntime(context, {
      approver: terminalApprover(mode, context.terminal, prompter),
      elicitor: terminalElicitor(context.terminal, prompter),
      authorizeDuringCalls: prompter !== undefined,
      scriptFile: stringOption(context, "script"),
      needsModel: true,
    });
    const control = new TurnControl(context, RUNTIME_ERROR_CODES.PROVIDER_UNAVAILABLE);
    try {
      const session = await runtime.openSession({ bundle, policy, ...(sessionId === undefined ? {} : { sessionId }) });
      if (!json) {
        session.subscribe(progressPrinter(context.terminal));
        context.terminal.note(
          context.terminal.paint("dim", `session ${session.id} · ${bundle.manifest.name} · identity ${session.executionIdentity.slice(0, 23)}…`),
        );
      }
      if (!interactive) {
        const turn = await control.turn(session, runtime, message, true);
        if (turn && json) context.terminal.printJson({ sessionId: session.id, ...turnJson(turn.result), unavailableProviders: turn.unavailable });
        // The one turn was the command: a Ctrl-C that cancelled it stopped the command too.
        const interruption = control.interruption();
        if (interruption) throw interruption;
        if (turn && turn.unavailable.length > 0) throw providersUnavailable(turn.unavailable);
        return turn?.result.completed ? EXIT_CODES.ok : EXIT_CODES.failed;
      }
      control.listen(lines());
      const code = await loop(context, session, runtime, lines(), control);
      // SIGTERM, SIGHUP or a closed output end the loop as a stopped command (the two-step Ctrl-C is the user quitting).
      if (context.signal.aborted) throw context.signal.reason;
      return code;
    } finally {
      control.stop();
      reader?.close();
      await runtime.close();
    }
  },
};

/**
 * The runtime's rule for a session id (`isSessionId`), checked before the runtime opens:
 * a mistyped `--session-id` is a usage error (exit 2) naming the option, not the runtime's
 * `OPTIONS_INVALID` (exit 1) found only after the runtime opened.
 */
function sessionIdOption(context: CommandContext, isSessionId: (value: unknown) => boolean): string | undefined {
  const sessionId = stringOption(context, "session-id");
  if (sessionId === undefined || isSessionId(sessionId)) return sessionId;
  const shown = JSON.stringify(sessionId.length > 60 ? `${sessionId.slice(0, 60)}…` : sessionId);
  throw usageError(
    `--session-id ${shown} is not a session id: use 1–128 letters, digits and . _ : - (starting with a letter or digit), or leave it out for a random one`,
  );
}

/** An MCP provider that could not be reached for a turn, as the runtime's `PROVIDER_UNAVAILABLE` diagnostic names it. */
interface UnavailableProvider {
  readonly namespace: string;
  readonly message: string;
}

/** How a turn went: its result, and the selected MCP providers it ran without. */
interface TurnOutcome {
  readonly result: TurnResult;
  readonly unavailable: readonly UnavailableProvider[];
}

/**
 * The error of a one-turn `run` that went without some of its tools: the turn may have
 * answered, but not with everything the bundle selects, which a script must be able to tell.
 */
function providersUnavailable(unavailable: readonly UnavailableProvider[]): OpenWorkerError {
  const names = unavailable.map((provider) => JSON.stringify(provider.namespace)).join(", ");
  const why = unavailable.map((provider) => provider.message).join("; ");
  return new OpenWorkerError(
    CLI_ERROR_CODES.PROVIDER_UNAVAILABLE,
    `the turn ran without the tools of MCP provider${unavailable.length === 1 ? "" : "s"} ${names}, which could not be reached: ${why}`,
    { details: { providers: unavailable.map((provider) => provider.namespace) } },
  );
}

async function loop(context: CommandContext, session: Session, runtime: Runtime, reader: LineReader, control: TurnControl): Promise<number> {
  context.terminal.note(context.terminal.paint("dim", "type a message; Ctrl-C cancels a turn, Ctrl-D quits"));
  for (;;) {
    const line = await reader.question(context.terminal.promptText(context.terminal.paint("bold", "you> ")), control.quitSignal);
    if (line === undefined || line.trim() === "/exit") return control.quitSignal.aborted ? EXIT_CODES.interrupted : EXIT_CODES.ok;
    if (line.trim() === "") continue;
    await control.turn(session, runtime, line, false);
    if (control.quitSignal.aborted) return EXIT_CODES.interrupted;
  }
}

/**
 * Stopping a session from outside. Ctrl-C: the first cancels the running turn, the next
 * quits. SIGTERM, SIGHUP or a closed stdout (`context.signal`) cancel the turn and quit.
 */
class TurnControl {
  readonly #context: CommandContext;
  /** The runtime's code for a diagnostic naming a provider it could not reach. */
  readonly #providerUnavailable: string;
  readonly #quit = new AbortController();
  #session: Session | undefined;
  #interrupts = 0;
  readonly #onInterrupt = () => this.interrupt();
  readonly #onStop = () => this.#stop();
  readonly #releaseCtrlC: () => void;

  constructor(context: CommandContext, providerUnavailable: string) {
    this.#context = context;
    this.#providerUnavailable = providerUnavailable;
    this.#releaseCtrlC = context.stops.takeCtrlC(this.#onInterrupt);
    if (context.signal.aborted) this.#stop();
    else context.signal.addEventListener("abort", this.#onStop, { once: true });
  }

  get quitSignal(): AbortSignal {
    return this.#quit.signal;
  }

  listen(reader: LineReader): void {
    reader.onInterrupt(this.#onInterrupt);
  }

  /** Runs one turn and prints its transcript (not with `--json`: the caller prints the report). */
  async turn(session: Session, runtime: Runtime, text: string, echo: boolean): Promise<TurnOutcome | undefined> {
    if (this.#quit.signal.aborted) return undefined;
    this.#session = session;
    this.#interrupts = 0;
    const before = session.messages.length;
    const unavailable: UnavailableProvider[] = [];
    // The runtime reports each selected provider it could not reach while preparing the turn
    // (M1, M2), as `namespace: why`; namespaces hold no ":".
    const unsubscribe = session.subscribe((event) => {
      if (event.type !== "diagnostic" || event.code !== this.#providerUnavailable) return;
      const colon = event.message.indexOf(":");
      unavailable.push({ namespace: event.message.slice(0, colon), message: event.message.slice(colon + 1).trim() });
    });
    try {
      const result = await session.runTurn(text);
      const messages = session.messages.slice(echo ? before : before + 1);
      if (!this.#context.terminal.json) printTurn(this.#context.terminal, messages, result, (alias) => session.selection?.byAlias(alias)?.qualifiedName);
      return { result, unavailable };
    } finally {
      unsubscribe();
      this.#session = undefined;
    }
  }

  /**
   * Why the last turn was stopped from outside: the command's stop (SIGTERM, SIGHUP, a
   * closed output), or a Ctrl-C during it; `undefined` when nothing stopped it.
   */
  interruption(): Error | undefined {
    if (this.#context.signal.aborted) return this.#context.signal.reason as Error;
    return this.#interrupts > 0 ? interruptedError("SIGINT") : undefined;
  }

  interrupt(): void {
    const { terminal } = this.#context;
    this.#interrupts++;
    if (this.#session && this.#interrupts === 1) {
      terminal.note(terminal.paint("yellow", "cancelling the turn… (Ctrl-C again to quit)"));
      this.#session.cancel("cancelled by the user (Ctrl-C)");
      return;
    }
    if (!this.#session && this.#interrupts === 1) {
      terminal.note(terminal.paint("dim", "(Ctrl-C again or Ctrl-D to quit)"));
      return;
    }
    terminal.note(terminal.paint("yellow", "closing the runtime…"));
    this.#session?.cancel("the user quit (Ctrl-C)");
    this.#releaseCtrlC();
    this.#quit.abort();
  }

  #stop(): void {
    const reason = this.#context.signal.reason as Error | undefined;
    const why = reason?.message ?? "stopped";
    this.#context.terminal.note(this.#context.terminal.paint("yellow", `${why}: closing the runtime…`));
    this.#session?.cancel(why);
    this.#quit.abort();
  }

  stop(): void {
    this.#releaseCtrlC();
    this.#context.signal.removeEventListener("abort", this.#onStop);
  }
}
