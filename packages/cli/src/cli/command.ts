import path from "node:path";
import type { SandboxLauncher } from "@openworker/mcp-bridge";
import type { ToolRegistry } from "@openworker/registry";
import { usageError } from "./errors.js";
import type { StopRequests } from "./stop-requests.js";
import type { Terminal } from "./terminal.js";

/** One option of a command (`--name VALUE` or `--flag`). */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  /** Placeholder shown in help for a string option (`DIR`, `JSON`). */
  readonly value?: string;
  readonly description: string;
  /** Allowed values of a string option. */
  readonly choices?: readonly string[];
}

/** The model providers `--provider` names. */
export const MODEL_PROVIDER_NAMES = Object.freeze(["scripted", "openai", "anthropic", "openai-responses"] as const);
export type ModelProviderName = (typeof MODEL_PROVIDER_NAMES)[number];

/** The global options every command accepts, resolved. */
export interface GlobalOptions {
  /** Absolute workspace folder (`--workspace`, default the current folder). */
  readonly workspace: string;
  /** Absolute journal path (`--journal`, default `<workspace>/.openworker/journal.db`). */
  readonly journalPath: string;
  /** `--journal postgres://…`: a PostgreSQL journal, which the journal commands read (`journalPath` is then the default path, unused). */
  readonly journalUrl: string | undefined;
  /** `--servers servers.json`, loaded into the registry before the runtime freezes it. */
  readonly servers: string | undefined;
  readonly provider: ModelProviderName | undefined;
  readonly baseUrl: string | undefined;
  readonly model: string | undefined;
  readonly apiKeyEnv: string | undefined;
}

/** What a running command gets. */
export interface CommandContext {
  readonly registry: ToolRegistry;
  /** How the program is called in help and hints (the host entry's file name). */
  readonly program: string;
  readonly command: CommandSpec;
  readonly options: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
  readonly globals: GlobalOptions;
  readonly terminal: Terminal;
  readonly env: NodeJS.ProcessEnv;
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  /**
   * Aborted when the command is asked to stop from outside (Ctrl-C, SIGTERM, SIGHUP, its
   * output closed); the reason is a `CLI_INTERRUPTED` error. Pass it to what the command
   * runs, then clean up as on any exit.
   */
  readonly signal: AbortSignal;
  /** Where `run` takes Ctrl-C over (cancel the turn first, quit on the second). */
  readonly stops: StopRequests;
  /** What starts `placement: "sandbox"` providers: the host's launcher, else the stock bubblewrap one. */
  readonly sandbox: SandboxLauncher | undefined;
}

/** A command: its words, help, options, and what it does (returns the exit code). */
export interface CommandSpec {
  /** The words that name it: `["tools", "list"]`. */
  readonly words: readonly string[];
  readonly summary: string;
  /** The usage line after the program and words. */
  readonly usage: string;
  /** Most positionals accepted, and how many are required. */
  readonly positionals: { readonly min: number; readonly max: number };
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** More help text (formats, examples). */
  readonly details?: string;
  /** Lists something: accepts `--json`. */
  readonly listing?: boolean;
  run(context: CommandContext): Promise<number>;
}

/** The options every command accepts. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  workspace: { type: "string", value: "DIR", description: "workspace of sessions (default: the current folder)" },
  journal: {
    type: "string",
    value: "PATH",
    description: "journal file (default: <workspace>/.openworker/journal.db), or a postgres:// URL for the journal commands",
  },
  servers: { type: "string", value: "FILE", description: "servers.json registering more MCP providers (stdio or local streamable_http)" },
  provider: {
    type: "string",
    value: "NAME",
    choices: MODEL_PROVIDER_NAMES,
    description:
      "model provider: scripted (with --script FILE), openai (any OpenAI-compatible endpoint, with --base-url and --model), anthropic or openai-responses (with --model and --api-key-env); none by default",
  },
  "base-url": {
    type: "string",
    value: "URL",
    description:
      "API root: of the OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (alone, implies --provider openai), or a proxy for anthropic and openai-responses",
  },
  model: { type: "string", value: "NAME", description: "model name, e.g. qwen2.5:7b (openai), claude-sonnet-4-5 (anthropic), gpt-5-mini (openai-responses)" },
  "api-key-env": { type: "string", value: "NAME", description: "environment variable holding the API key (never passed on the command line)" },
  help: { type: "boolean", description: "show help" },
});

/** The `--json` option of listing commands. */
export const JSON_OPTION: Readonly<Record<string, OptionSpec>> = Object.freeze({
  json: { type: "boolean", description: "print JSON instead of text (no colour)" },
});

/** Resolves the global options (relative paths against the current folder). */
export function globalOptions(values: Readonly<Record<string, string | boolean | undefined>>, cwd: string): GlobalOptions {
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === "string" ? value : undefined;
  };
  const workspace = path.resolve(cwd, text("workspace") ?? ".");
  const provider = text("provider");
  if (provider !== undefined && !isModelProviderName(provider)) {
    throw usageError(`--provider must be one of ${MODEL_PROVIDER_NAMES.map((name) => `"${name}"`).join(", ")}, got ${JSON.stringify(provider)}`);
  }
  const baseUrl = text("base-url");
  const journal = text("journal");
  const journalUrl = journal !== undefined && /^postgres(ql)?:\/\//i.test(journal) ? journal : undefined;
  return {
    workspace,
    journalPath: path.resolve(cwd, journalUrl === undefined && journal !== undefined ? journal : path.join(workspace, ".openworker", "journal.db")),
    journalUrl,
    servers: text("servers") === undefined ? undefined : path.resolve(cwd, text("servers")!),
    provider: provider ?? (baseUrl !== undefined ? "openai" : undefined),
    baseUrl,
    model: text("model"),
    apiKeyEnv: text("api-key-env"),
  };
}

function isModelProviderName(name: string): name is ModelProviderName {
  return (MODEL_PROVIDER_NAMES as readonly string[]).includes(name);
}

/** A string option's value, or undefined. */
export function stringOption(context: CommandContext, name: string): string | undefined {
  const value = context.options[name];
  return typeof value === "string" ? value : undefined;
}

/** A string option that must be given. */
export function requiredOption(context: CommandContext, name: string): string {
  const value = stringOption(context, name);
  if (value === undefined || value === "")
    throw usageError(`${context.command.words.join(" ")} needs --${name} ${context.command.options[name]?.value ?? "VALUE"}`);
  return value;
}

/** A string option restricted to its `choices`. */
export function choiceOption<T extends string>(context: CommandContext, name: string, fallback: T): T {
  const value = stringOption(context, name);
  if (value === undefined) return fallback;
  const choices = context.command.options[name]?.choices ?? [];
  if (!choices.includes(value)) throw usageError(`--${name} must be one of ${choices.join(", ")}, got ${JSON.stringify(value)}`);
  return value as T;
}
