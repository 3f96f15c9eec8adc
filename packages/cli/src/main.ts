import path from "node:path";
import type { SandboxLauncher } from "@openworker/mcp-bridge";
import type { ToolRegistry } from "@openworker/registry";
import { bubblewrapLauncher } from "@openworker/sandbox";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { globalOptions, type CommandContext, type CommandSpec } from "./cli/command.js";
import { CLI_ERROR_CODES, EXIT_CODES, exitCodeFor, hintFor } from "./cli/errors.js";
import { commandHelp, programHelp } from "./cli/help.js";
import { commandNamed, parseCommandLine } from "./cli/parse.js";
import { StopRequests } from "./cli/stop-requests.js";
import { Terminal } from "./cli/terminal.js";
import { CLI_VERSION } from "./cli/version.js";
import { COMMANDS } from "./commands/index.js";
import { loadServersFile } from "./setup/servers-file.js";

/**
 * Where the CLI reads and writes, and how it is named. Every field has a default from `process`.
 *
 * @example
 * ```ts
 * const options: MainOptions = { argv: ["tools", "list"], programName: "my-host" };
 * ```
 */
export interface MainOptions {
  /** The arguments after the program. Default: `process.argv.slice(2)`. */
  readonly argv?: readonly string[];
  /** The name in help and hints. Default: the host entry's file name (`process.argv[1]`). */
  readonly programName?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly stdout?: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Stops the command as Ctrl-C would (for hosts that wrap the CLI). */
  readonly signal?: AbortSignal;
  /**
   * Starts MCP providers registered with `placement: "sandbox"` (see the bridge's
   * `SandboxLauncher`). Default: `@openworker/sandbox`'s bubblewrap launcher, which
   * applies each provider's sandbox policy; where bubblewrap cannot run, such providers
   * are reported unavailable (`MCP_SANDBOX_FAILED`) and never run as host code.
   */
  readonly sandbox?: SandboxLauncher;
}

/**
 * The stock OpenWorker CLI entry point for a host executable (the seed's
 * `main_with_registry`): parses the command line, runs the command with this registry,
 * sets `process.exitCode` (see {@link EXIT_CODES}), and makes sure the process ends:
 * if anything still holds the event loop half a second later (an abandoned tool's
 * timers), it exits with that code once stdout and stderr are flushed.
 * Call it at the end of the host's main, after every partner package and MCP provider
 * registered: `serve --stdio` re-runs this same entry, so the child registers the same
 * native tools. Hosts that go on after the command use {@link runCli}.
 *
 * @example
 * ```ts
 * const registry = new ToolRegistry();
 * exampleTools.register(registry);
 * registry.registerMcp({ namespace: "acer", program: "/opt/acer/bin/acer-mcp-launcher", args: [] });
 * await mainWithRegistry(registry);
 * ```
 */
export async function mainWithRegistry(registry: ToolRegistry, options: MainOptions = {}): Promise<number> {
  const code = await runCli(registry, options);
  process.exitCode = code;
  // The command is done: its outcome is printed and its runtime closed (sessions ended,
  // MCP processes verified ended, the journal committed and closed). The process ends as
  // soon as the event loop is empty; what still holds it after END_GRACE_MS belongs to
  // nothing the command waits for, such as a timer of a native tool abandoned at its bound
  // or on a stop (E1), and must not keep it alive. The grace lets Node reap the child
  // processes the bridge ended, which would otherwise linger as zombies.
  setTimeout(() => {
    void Promise.all([flushed(options.stdout ?? process.stdout), flushed(options.stderr ?? process.stderr)]).then(() => process.exit(code));
  }, END_GRACE_MS).unref();
  return code;
}

/** How long a finished command's process may wait for its event loop to empty before it is ended. */
const END_GRACE_MS = 500;

/**
 * Runs one command line and returns its exit code without touching `process.exitCode`:
 * for hosts that wrap the CLI. Never throws: every error is printed as one line
 * `error CODE: message` and a `hint:` line.
 *
 * @example
 * ```ts
 * const code = await runCli(registry, { argv: ["tools", "list", "--json"] });
 * ```
 */
export async function runCli(registry: ToolRegistry, options: MainOptions = {}): Promise<number> {
  const argv = options.argv ?? process.argv.slice(2);
  const env = options.env ?? process.env;
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const program = options.programName ?? programNameOf(process.argv[1]);
  const json = argv.includes("--json");
  // Notes go through the terminal, and a closed stdout stops the command.
  const stops = new StopRequests((text) => terminal.note(text));
  const terminal = new Terminal({ stdout, stderr }, { json, env, onOutputClosed: () => stops.outputClosed() });
  const stopFromHost = () => stops.stop("SIGINT");
  options.signal?.addEventListener("abort", stopFromHost, { once: true });
  if (options.signal?.aborted) stopFromHost();
  let command: CommandSpec | undefined;
  try {
    const parsed = parseCommandLine(argv, COMMANDS);
    if (parsed.kind === "version") {
      if (json) terminal.printJson({ name: "@openworker/cli", version: CLI_VERSION });
      else terminal.line(CLI_VERSION);
      return EXIT_CODES.ok;
    }
    if (parsed.kind === "help") {
      const help = parsed.command ? commandHelp(program, parsed.command) : programHelp(program, COMMANDS, parsed.group);
      // Asked for, help is the result (stdout, exit 0); shown because nothing was asked, it is a usage error.
      if (argv.length > 0) {
        terminal.line(help);
        return EXIT_CODES.ok;
      }
      terminal.usage(help);
      return EXIT_CODES.usage;
    }
    command = parsed.command;
    const globals = globalOptions(parsed.values, options.cwd ?? process.cwd());
    // servers.json registers providers: it must happen before any runtime freezes the registry (N8).
    if (globals.servers !== undefined) {
      // A host that runs commands one after another in one process froze its registry with the first (N8).
      if (registry.frozen) {
        throw new OpenWorkerError(
          "REGISTRY_FROZEN",
          `--servers ${globals.servers}: cannot register its providers: a runtime already opened this registry in this process; pass --servers to the first command only, or call registry.loadServersFile() before runCli`,
          { details: { file: globals.servers } },
        );
      }
      await loadServersFile(registry, globals.servers, (text) => terminal.note(text));
    }
    const context: CommandContext = {
      registry,
      program,
      command,
      options: parsed.values,
      positionals: parsed.positionals,
      globals,
      terminal,
      env,
      stdin: options.stdin ?? process.stdin,
      stdout,
      signal: stops.signal,
      // The host's own launcher first; the stock one otherwise (it does nothing until a sandboxed provider starts).
      sandbox: options.sandbox ?? bubblewrapLauncher(),
      stops,
    };
    return await command.run(context);
  } catch (error) {
    command ??= commandNamed(argv, COMMANDS);
    const { code, message, reason, namespace, cause } = describeError(error);
    terminal.error(code, message, hintFor(code, program, command?.words.join(" ") ?? "", reason, namespace));
    return exitCodeFor(code, cause);
  } finally {
    options.signal?.removeEventListener("abort", stopFromHost);
    stops.dispose();
    terminal.dispose();
  }
}

function describeError(error: unknown): { code: string; message: string; reason?: string; namespace?: string; cause?: unknown } {
  if (OpenWorkerError.isInstance(error)) {
    const { reason, namespace } = error.details;
    return {
      code: error.code,
      message: error.message,
      ...(typeof reason === "string" ? { reason } : {}),
      ...(typeof namespace === "string" ? { namespace } : {}),
      cause: error.details.cause,
    };
  }
  return { code: CLI_ERROR_CODES.INTERNAL, message: error instanceof Error ? error.message : String(error) };
}

/** How long the end of the process waits for a stream's pending writes (a reader that stopped reading). */
const FLUSH_TIMEOUT_MS = 2000;

/** Resolves once what was written to `stream` is handed to the operating system, or it failed, or after {@link FLUSH_TIMEOUT_MS}. */
function flushed(stream: NodeJS.WritableStream): Promise<void> {
  const writable = stream as NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean };
  if (writable.destroyed === true || !writable.writable || writable.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, FLUSH_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      stream.write("", done);
    } catch {
      done();
    }
  });
}

function programNameOf(entry: string | undefined): string {
  return entry ? path.basename(entry) : "openworker";
}
