import { OpenWorkerError } from "@openworker/tools-sdk";

/**
 * The process exit codes of every command.
 *
 * @example
 * ```ts
 * if ((await runCli(registry, { argv })) === EXIT_CODES.usage) printUsage();
 * ```
 */
export const EXIT_CODES = Object.freeze({
  /** The command did what it was asked. */
  ok: 0,
  /** The command ran and failed (a problem found, a call that did not succeed, an error). */
  failed: 1,
  /** The command line was wrong (unknown command or option, missing value). */
  usage: 2,
  /** `run --message`: an MCP provider the bundle selects could not be reached for the turn (`CLI_PROVIDER_UNAVAILABLE`). */
  providerUnavailable: 3,
  /** Stopped by SIGHUP (128 + 1, as a shell reports a process the signal ended). */
  hangup: 129,
  /** Stopped by Ctrl-C (SIGINT: 128 + 2). */
  interrupted: 130,
  /** Stopped because the reader of stdout went away (`| head`: as SIGPIPE, 128 + 13). */
  outputClosed: 141,
  /** Stopped by SIGTERM (128 + 15). */
  terminated: 143,
});

/**
 * The exit code of a command that ended with the error `code`: `CLI_USAGE` 2,
 * `CLI_PROVIDER_UNAVAILABLE` 3, `CLI_INTERRUPTED` 128 + the signal (`cause` is its
 * `details.cause`), every other code 1.
 */
export function exitCodeFor(code: string, cause?: unknown): number {
  if (code === CLI_ERROR_CODES.USAGE) return EXIT_CODES.usage;
  if (code === CLI_ERROR_CODES.PROVIDER_UNAVAILABLE) return EXIT_CODES.providerUnavailable;
  if (code !== CLI_ERROR_CODES.INTERRUPTED) return EXIT_CODES.failed;
  switch (cause) {
    case "SIGHUP":
      return EXIT_CODES.hangup;
    case "SIGTERM":
      return EXIT_CODES.terminated;
    case "output closed":
      return EXIT_CODES.outputClosed;
    default:
      return EXIT_CODES.interrupted;
  }
}

/**
 * Stable codes of the CLI's own errors (printed as `error CODE: message`).
 *
 * @example
 * ```ts
 * OpenWorkerError.hasCode(error, CLI_ERROR_CODES.SCRIPT_INVALID);
 * ```
 */
export const CLI_ERROR_CODES = Object.freeze({
  /** An unknown command, option or a missing/invalid option value. Exit 2. */
  USAGE: "CLI_USAGE",
  /** `--args`, `--policy` or a `--script` file is not what the command needs. */
  ARGUMENTS_INVALID: "CLI_ARGUMENTS_INVALID",
  POLICY_INVALID: "CLI_POLICY_INVALID",
  SCRIPT_INVALID: "CLI_SCRIPT_INVALID",
  /** The --policy file: no file at the path. */
  POLICY_FILE_NOT_FOUND: "CLI_POLICY_FILE_NOT_FOUND",
  /** The --policy file: the path is a folder. */
  POLICY_FILE_IS_DIRECTORY: "CLI_POLICY_FILE_IS_DIRECTORY",
  /** The --policy file: a FIFO, socket or device, whose reading could wait for ever. */
  POLICY_FILE_NOT_A_FILE: "CLI_POLICY_FILE_NOT_A_FILE",
  /** The --policy file: over the 1 MiB a configuration file may have. */
  POLICY_FILE_TOO_LARGE: "CLI_POLICY_FILE_TOO_LARGE",
  /** The --policy file: not UTF-8 text. */
  POLICY_FILE_NOT_UTF8: "CLI_POLICY_FILE_NOT_UTF8",
  /** The --policy file exists but cannot be opened or read (permissions, I/O). */
  POLICY_FILE_UNREADABLE: "CLI_POLICY_FILE_UNREADABLE",
  /** The --script file: no file at the path. */
  SCRIPT_FILE_NOT_FOUND: "CLI_SCRIPT_FILE_NOT_FOUND",
  /** The --script file: the path is a folder. */
  SCRIPT_FILE_IS_DIRECTORY: "CLI_SCRIPT_FILE_IS_DIRECTORY",
  /** The --script file: a FIFO, socket or device, whose reading could wait for ever. */
  SCRIPT_FILE_NOT_A_FILE: "CLI_SCRIPT_FILE_NOT_A_FILE",
  /** The --script file: over the 1 MiB a configuration file may have. */
  SCRIPT_FILE_TOO_LARGE: "CLI_SCRIPT_FILE_TOO_LARGE",
  /** The --script file: not UTF-8 text. */
  SCRIPT_FILE_NOT_UTF8: "CLI_SCRIPT_FILE_NOT_UTF8",
  /** The --script file exists but cannot be opened or read (permissions, I/O). */
  SCRIPT_FILE_UNREADABLE: "CLI_SCRIPT_FILE_UNREADABLE",
  /**
   * `run` without a model: no `--script` and no `--provider`. (`serve --stdio`
   * starts without one; its `turn.run` then answers `MODEL_PROVIDER_UNKNOWN`.)
   */
  MODEL_MISSING: "CLI_MODEL_MISSING",
  /** `--api-key-env NAME` names an unset variable. */
  API_KEY_MISSING: "CLI_API_KEY_MISSING",
  /** `call` names a tool the bundle does not select (B2). */
  TOOL_NOT_SELECTED: "CLI_TOOL_NOT_SELECTED",
  /** `journal show|export` names a session the journal does not hold. */
  SESSION_UNKNOWN: "CLI_SESSION_UNKNOWN",
  /** `serve --mcp` could not load the MCP SDK. */
  MCP_SDK_MISSING: "CLI_MCP_SDK_MISSING",
  /** `serve --mcp --http` could not listen. */
  LISTEN_FAILED: "CLI_LISTEN_FAILED",
  /**
   * `serve --mcp --http`: the bundle's selection does not resolve (a tool not registered, a
   * provider that did not start…); each problem is printed above it as `problem CODE: …`.
   */
  BUNDLE_DOES_NOT_RESOLVE: "BUNDLE_DOES_NOT_RESOLVE",
  /** A `journal` command found no journal file at `--journal PATH` (`call`, `run` and `serve` create it). */
  JOURNAL_NOT_FOUND: "JOURNAL_NOT_FOUND",
  /**
   * The command was stopped from outside (Ctrl-C, SIGTERM, SIGHUP, or its output closed)
   * and cleaned up: sessions closed, MCP processes ended and verified. Exit 130 (Ctrl-C),
   * 143 (SIGTERM), 129 (SIGHUP) or 141 (output closed).
   */
  INTERRUPTED: "CLI_INTERRUPTED",
  /**
   * `run --message`: an MCP provider the bundle selects could not be reached for the turn,
   * so its tools were missing from it; the message names each provider. Exit 3.
   */
  PROVIDER_UNAVAILABLE: "CLI_PROVIDER_UNAVAILABLE",
  /** `auth` names a namespace no registered provider has, or a provider that does not use OAuth (a stdio one). */
  AUTH_PROVIDER_UNKNOWN: "CLI_AUTH_PROVIDER_UNKNOWN",
  /** Something unexpected; the message says what. */
  INTERNAL: "CLI_INTERNAL",
});

/** An error in how the command was typed: printed with the command's usage hint, exit 2. */
export function usageError(message: string): OpenWorkerError {
  return new OpenWorkerError(CLI_ERROR_CODES.USAGE, message);
}

const TOOLS_CHECK_HINT =
  "a tool or the bundle's selection is at fault, not the command line: `{program} tools check --bundle DIR` resolves every selected tool and lists each problem";

const HINTS: readonly (readonly [prefix: string, hint: string])[] = [
  ["CLI_USAGE", "run `{program} {command} --help` for the options"],
  ["CLI_ARGUMENTS_INVALID", 'pass the tool\'s arguments as one JSON object, e.g. --args \'{"query":"mcp"}\''],
  ["CLI_POLICY_FILE", "check the path of --policy; relative paths are resolved against the current folder"],
  ["CLI_SCRIPT_FILE", "check the path of --script; relative paths are resolved against the current folder"],
  ["CLI_POLICY", 'a policy file is JSON: {"name":"…","classifications":{"ns.tool":"read_only"},"rules":{"read_only":"allow"}}'],
  ["CLI_SCRIPT", 'a script file is a JSON array of steps {"text"?: string, "toolCalls"?: [{"name": alias, "arguments": {…}}]}'],
  [
    "CLI_MODEL_MISSING",
    "pass --script FILE (scripted model), --provider openai --base-url URL --model NAME, or --provider anthropic|openai-responses --model NAME --api-key-env VAR",
  ],
  [
    "CLI_API_KEY_MISSING",
    "export the variable named by --api-key-env (anthropic and openai-responses need one; --provider openai runs without the option for a keyless local endpoint)",
  ],
  ["CLI_TOOL_NOT_SELECTED", "list the bundle's tools with `{program} tools list --bundle DIR`, or call without --bundle"],
  ["CLI_SESSION_UNKNOWN", "list the sessions with `{program} journal sessions`"],
  ["CLI_MCP_SDK_MISSING", "@openworker/cli needs @modelcontextprotocol/server and @modelcontextprotocol/node installed beside it"],
  ["CLI_INTERRUPTED", "nothing it started is left running; sessions it opened are closed and journaled (`{program} journal sessions`)"],
  [
    "MCP_AUTHORIZATION_REQUIRED",
    "authorize the provider once, outside a turn: `{program} auth login {namespace} --servers FILE` (the tokens are kept in <workspace>/.openworker/mcp-tokens.json)",
  ],
  ["CLI_PROVIDER_UNAVAILABLE", "the turn ran without those providers' tools: `{program} tools check --bundle DIR` starts each provider and says why it fails"],
  ["CLI_LISTEN_FAILED", "pick another port with --http PORT (0 picks a free one)"],
  ["TOOL_NOT_REGISTERED", "names are exact; `{program} tools list` shows the registered tools"],
  ["NAMESPACE_UNKNOWN", "`{program} tools list` shows the registered namespaces (native tools and MCP providers)"],
  [
    "JOURNAL_LOCKED",
    "another process writes this journal: `{program} journal …` commands read beside it; to write, stop that process or pass another --journal PATH",
  ],
  ["JOURNAL_SESSION_EXISTS", "pick another --session-id, or leave it out for a fresh random one"],
  ["JOURNAL_NOT_FOUND", "check --journal PATH (default <workspace>/.openworker/journal.db); `call`, `run` and `serve` create the journal"],
  ["JOURNAL_PG_", "check --journal postgres://… (server address, credentials, database and schema); messages show it without its password"],
  ["JOURNAL_", "check --journal PATH (default <workspace>/.openworker/journal.db)"],
  ["SERVERS_FILE", "fix the servers file named in the message (see the registry README for its format)"],
  // The folder was found and read: its tools are at fault, not the --bundle path.
  ["BUNDLE_DOES_NOT_RESOLVE", "the problems above say what does not resolve; `{program} tools check --bundle DIR` lists each one"],
  ["BUNDLE_", "pass --bundle with the folder holding manifest.md and tools.json (or its parent)"],
  ["MANIFEST_", "fix manifest.md as the message says"],
  ["TOOLS_JSON", "fix tools.json as the message says; `{program} tools check --bundle DIR` lists every problem"],
  [
    "MODEL_PROVIDER_UNKNOWN",
    "pass --script FILE (scripted model), --provider openai --base-url URL --model NAME, or --provider anthropic|openai-responses --model NAME --api-key-env VAR",
  ],
  ["MODEL_", "check --provider, --base-url, --model and the endpoint; a key is sent only from the variable --api-key-env names"],
  ["OPENAI_", "check --base-url, --model and --api-key-env (the CLI sends a key only from the variable it names)"],
  ["REGISTRY_", "register every tool and provider before the runtime opens"],
  // Provider definitions come from --servers or from the host's own registerMcp calls; the message names which.
  [
    "PROVIDER_",
    "fix the MCP provider the message names: its entry in the --servers file or the host's registerMcp call (formats in the @openworker/registry README)",
  ],
  ["PLACEMENT_INVALID", 'placement is "host" (default) or "sandbox", and "sandbox" only for stdio providers the host starts'],
  ["DUPLICATE_PROVIDER", "each MCP provider needs its own namespace: rename one in the --servers file or in the host's registration"],
  ["NAMESPACE_CONFLICT", "a namespace belongs to native tools or to one MCP provider, never both: rename the provider's namespace"],
  ["NAMESPACE_", 'namespaces use ASCII letters, digits, "_" and "-", are not "openworker", and leave room for ".tool" within 80 bytes'],
  // Name codes of the SDK: a tool name in tools.json (or given to a command) broke N1–N4.
  [
    "NAME_",
    'tool names are "namespace.tool" in ASCII letters, digits, "_", "-" and ".", at most 80 bytes; `{program} tools check --bundle DIR` lists every problem of a bundle',
  ],
  [
    "ALIAS_",
    'a name\'s model alias (each "." becomes "__") must fit 80 bytes; shorten the name; `{program} tools check --bundle DIR` lists every problem of a bundle',
  ],
  [
    "MCP_SANDBOX_",
    "the sandbox did not start the provider, and it never runs as host code instead: install what the message names (bubblewrap: apt-get install bubblewrap), fix its sandbox policy, or give the host's own sandbox launcher",
  ],
  ["MCP_", "check the MCP provider's program or URL; `{program} tools check --bundle DIR` starts it and reports"],
  // A partner's tool or a bundle's selection is at fault, not the command line (B5, N6, A4).
  ...["SCHEMA_", "DESCRIPTOR_", "TOOL_", "DUPLICATE_TOOL", "SELECTION_", "CATALOG_", "CLASSIFICATION_INVALID", "NATIVE_SANDBOX_PLACEMENT", "UNKNOWN_TOOL"].map(
    (prefix) => [prefix, TOOLS_CHECK_HINT] as const,
  ),
  ["CLI_INTERNAL", "this is a fault of the CLI or the host, not of the command line; the message says what failed"],
  ["INTERNAL", "this is a fault of the CLI or the host, not of the command line; the message says what failed"],
];

/** The `details.reason` of an error about the name `call` was given without `--bundle` (see {@link REASON_HINTS}). */
export const CALL_NAME_REASON = "call-name";

/**
 * Hints chosen by the error's `details.reason` before its code: the code alone would point
 * at the wrong thing. A journal whose SQLite binding does not load fails `JOURNAL_OPEN_FAILED`
 * like a bad path, but no --journal PATH would help.
 */
const REASON_HINTS: readonly (readonly [code: string | "*", reason: string, hint: string])[] = [
  [
    "JOURNAL_OPEN_FAILED",
    "native-binding",
    "the journal file is not at fault: better-sqlite3's native binding does not load in this Node.js on this platform (reinstall better-sqlite3, or build it from source in its package folder with `npm run build-release`)",
  ],
  ["JOURNAL_OPEN_FAILED", "node-version", "the journal file is not at fault: run the host on Node.js 22.12 or later (the maintained LTS lines are 22 and 24)"],
  // `call` without --bundle: there is no bundle to check, only the name given.
  ["*", CALL_NAME_REASON, "`{program} tools list` shows the registered native tools and MCP providers; call takes a qualified name, namespace.tool"],
];

/**
 * The hint of every other error: none of them is a usage problem (only `CLI_USAGE` is), so
 * none points at `--help`; a resolver or runtime error is most often a tool or bundle problem.
 */
const FALLBACK_HINT = "the message says what failed; `{program} tools check --bundle DIR` checks a bundle's tools and MCP providers";

/** The one-line hint printed under an error with this code (and `details.reason`, when it has one). */
export function hintFor(code: string, program: string, command: string, reason?: string, namespace?: string): string {
  const hint =
    REASON_HINTS.find(([coded, why]) => (coded === code || coded === "*") && why === reason)?.[2] ??
    HINTS.find(([prefix]) => code.startsWith(prefix))?.[1] ??
    FALLBACK_HINT;
  return hint
    .replaceAll("{program}", program)
    .replaceAll("{command}", command || "")
    .replaceAll("{namespace}", namespace ?? "NAMESPACE")
    .replace(/ {2,}/g, " ");
}
