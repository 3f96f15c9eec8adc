import { isSessionId, type Runtime, type Session, type TurnResult } from "@openworker/runtime";
import { choiceOption, requiredOption, stringOption, type CommandContext, type CommandSpec } from "../cli/command.js";
import { EXIT_CODES, usageError } from "../cli/errors.js";
import { interruptedError } from "../cli/stop-requests.js";
import { terminalApprover, type ApproveMode } from "../setup/approver.js";
import { loadBundleDir, noteUnselectedClassifications } from "../setup/bundle.js";
import { LineReader } from "../setup/lines.js";
import { readPolicyFile } from "../setup/policy.js";
import { openRuntime } from "../setup/runtime.js";
import { printTurn, progressPrinter } from "../setup/transcript.js";
import { SCRIPT_OPTION, SESSION_OPTIONS } from "./options.js";

/** `run`: an agent session in the terminal. */
export const runCommand: CommandSpec = {
  words: ["run"],
  summary: "Run an agent session on a bundle: one --message, or an interactive loop",
  usage: "--bundle DIR [--message TEXT] [--script FILE] [--policy FILE] [--approve ask|yes|no] [--session-id ID]",
  positionals: { min: 0, max: 0 },
  options: {
    bundle: { type: "string", value: "DIR", description: "the coworker bundle" },
    message: { type: "string", value: "TEXT", description: "run one turn with this message, print the transcript and exit" },
    ...SCRIPT_OPTION,
    ...SESSION_OPTIONS,
    "session-id": { type: "string", value: "ID", description: "the session id to journal under (default: a random ses_… id)" },
  },
  details:
    "Without --message: a prompt loop. Each line is a turn; approvals are asked on the terminal; progress\n" +
    "lines go to stderr, the transcript to stdout. Ctrl-C cancels the running turn (the runtime revokes the\n" +
    "tools and journals the cancellation; nothing is killed mid-write); a second Ctrl-C, or Ctrl-D at the\n" +
    "prompt, closes the runtime (ending MCP processes, verified) and exits.\n" +
    "With --message: one turn; exit 0 when the model answered, 1 when the turn stopped.\n" +
    "Model: --script FILE (scripted), or --provider openai --base-url URL --model NAME [--api-key-env VAR].",
  async run(context) {
    const sessionId = sessionIdOption(context);
    const bundle = await loadBundleDir(requiredOption(context, "bundle"));
    const message = stringOption(context, "message");
    const mode = choiceOption<ApproveMode>(context, "approve", "ask");
    const policyFile = stringOption(context, "policy");
    const policy = policyFile === undefined ? {} : await readPolicyFile(policyFile);
    if (policyFile !== undefined) noteUnselectedClassifications(context.terminal, bundle, policy, policyFile);
    const interactive = message === undefined;

    let reader: LineReader | undefined;
    const lines = () => (reader ??= new LineReader(context.stdin, process.stderr));
    // Approvals are asked where a person is: the terminal, or the input an interactive loop reads anyway.
    const prompter = context.stdin.isTTY || interactive ? lines : undefined;
    const runtime = await openRuntime(context, {
      approver: terminalApprover(mode, context.terminal, prompter),
      scriptFile: stringOption(context, "script"),
      needsModel: true,
    });
    const control = new TurnControl(context);
    try {
      const session = await runtime.openSession({ bundle, policy, ...(sessionId === undefined ? {} : { sessionId }) });
      session.subscribe(progressPrinter(context.terminal));
      context.terminal.note(context.terminal.paint("dim", `session ${session.id} · ${bundle.manifest.name} · identity ${session.executionIdentity.slice(0, 23)}…`));
      if (!interactive) {
        const result = await control.turn(session, runtime, message, true);
        // The one turn was the command: a Ctrl-C that cancelled it stopped the command too.
        const interruption = control.interruption();
        if (interruption) throw interruption;
        return result?.completed ? EXIT_CODES.ok : EXIT_CODES.failed;
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
function sessionIdOption(context: CommandContext): string | undefined {
  const sessionId = stringOption(context, "session-id");
  if (sessionId === undefined || isSessionId(sessionId)) return sessionId;
  const shown = JSON.stringify(sessionId.length > 60 ? `${sessionId.slice(0, 60)}…` : sessionId);
  throw usageError(`--session-id ${shown} is not a session id: use 1–128 letters, digits and . _ : - (starting with a letter or digit), or leave it out for a random one`);
}

async function loop(context: CommandContext, session: Session, runtime: Runtime, reader: LineReader, control: TurnControl): Promise<number> {
  context.terminal.note(context.terminal.paint("dim", "type a message; Ctrl-C cancels a turn, Ctrl-D quits"));
  for (;;) {
    const line = await reader.question(context.terminal.promptText(context.terminal.paint("bold", "you> ")), control.quitSignal);
    if (line === undefined || line.trim() === "/exit") return control.quitSignal.aborted ? EXIT_CODES.failed : EXIT_CODES.ok;
    if (line.trim() === "") continue;
    await control.turn(session, runtime, line, false);
    if (control.quitSignal.aborted) return EXIT_CODES.failed;
  }
}

/**
 * Stopping a session from outside. Ctrl-C: the first cancels the running turn, the next
 * quits. SIGTERM, SIGHUP or a closed stdout (`context.signal`) cancel the turn and quit.
 */
class TurnControl {
  readonly #context: CommandContext;
  readonly #quit = new AbortController();
  #session: Session | undefined;
  #interrupts = 0;
  readonly #onInterrupt = () => this.interrupt();
  readonly #onStop = () => this.#stop();
  readonly #releaseCtrlC: () => void;

  constructor(context: CommandContext) {
    this.#context = context;
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

  async turn(session: Session, runtime: Runtime, text: string, echo: boolean): Promise<TurnResult | undefined> {
    if (this.#quit.signal.aborted) return undefined;
    this.#session = session;
    this.#interrupts = 0;
    const before = session.messages.length;
    try {
      const result = await session.runTurn(text);
      const messages = session.messages.slice(echo ? before : before + 1);
      printTurn(this.#context.terminal, messages, result, (alias) => session.selection?.byAlias(alias)?.qualifiedName);
      return result;
    } finally {
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
