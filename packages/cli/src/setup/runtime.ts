import type { Approver, Elicitor, ModelProvider, Runtime } from "@openworker/runtime";
import { OpenWorkerError } from "@openworker/tools-sdk";
import type { CommandContext, ModelProviderName } from "../cli/command.js";
import { CLI_ERROR_CODES, usageError } from "../cli/errors.js";
import { mcpAuthorization } from "./authorization.js";
import { providerProgress } from "./provider-progress.js";
import { readScriptFile } from "./script.js";

/** What a command needs from its runtime. */
export interface RuntimeNeeds {
  readonly approver?: Approver;
  /** Answers what MCP providers ask the user mid-call; set, providers are told they may ask. */
  readonly elicitor?: Elicitor;
  /** How long a provider's request for input waits for the elicitor (the bridge's default: 10 minutes). */
  readonly elicitationTimeoutMs?: number;
  /** A person is at the terminal: a provider that asks for more scopes mid-call gets the authorization step there. */
  readonly authorizeDuringCalls?: boolean;
  /** `--script FILE` of `run`/`serve`: steps of the scripted model. */
  readonly scriptFile?: string | undefined;
  /** `run` and `serve --stdio` drive a model; `call`, `serve --mcp` do not. */
  readonly needsModel: boolean;
}

/**
 * Opens the runtime for a command: the model provider from the global options, the
 * journal at `--journal`, the workspace. Imported lazily so that `--help` and
 * `tools list` never load SQLite, MCP or a model client. The registry is frozen
 * from here on (N8); `--servers` was loaded before.
 */
export async function openRuntime(context: CommandContext, needs: RuntimeNeeds): Promise<Runtime> {
  if (context.globals.journalUrl !== undefined)
    throw usageError("--journal postgres://… is read by the journal commands; a session writes the embedded SQLite journal: give --journal a file PATH");
  const { models, secrets } = await modelProviders(context, needs);
  const { Runtime } = await import("@openworker/runtime");
  const runtime = await Runtime.openWithRegistry(context.registry, {
    workspace: context.globals.workspace,
    journal: { path: context.globals.journalPath },
    models,
    ...(needs.approver ? { approver: needs.approver } : {}),
    ...(needs.elicitor ? { elicitor: needs.elicitor } : {}),
    mcp: {
      ...(context.sandbox ? { sandbox: context.sandbox } : {}),
      onProviderStart: providerProgress((text) => context.terminal.note(text)),
      ...(needs.elicitationTimeoutMs === undefined ? {} : { elicitationTimeoutMs: needs.elicitationTimeoutMs }),
      // Tokens `auth login` obtained. With a person at the terminal, the authorization step runs there when a provider
      // needs it (more scopes mid-call, or no token yet); without one a provider needing it is unavailable, with a hint.
      authorization: (await mcpAuthorization(context, needs.authorizeDuringCalls === true ? "during calls" : false)).options,
    },
    secrets,
  });
  reportJournalOpening(context, runtime.journal);
  return runtime;
}

/**
 * What opening the journal as its writer found, on stderr: calls a crash interrupted
 * (marked `interrupted`, never replayed, A3) and anything that contradicts the file's own
 * records (`journal.warnings`), with the command that checks the file.
 */
export function reportJournalOpening(context: CommandContext, journal: Pick<Runtime["journal"], "recovered" | "warnings">): void {
  const { terminal, program } = context;
  for (const call of journal.recovered) {
    terminal.note(
      terminal.paint(
        "yellow",
        `journal: call ${call.callId} (${call.qualifiedName || "unknown tool"}) of session ${call.sessionId} was interrupted by a crash${call.started ? " after it started" : " before it started"}; it is marked interrupted and was not run again`,
      ),
    );
  }
  for (const warning of journal.warnings) {
    terminal.note(terminal.paint("yellow", `journal warning: ${warning.message}; check the file with \`${program} journal verify\``));
  }
}

async function modelProviders(context: CommandContext, needs: RuntimeNeeds): Promise<{ models: ModelProvider[]; secrets: string[] }> {
  if (providerName(context, needs.scriptFile) === "scripted" && needs.needsModel && needs.scriptFile === undefined) {
    throw new OpenWorkerError(CLI_ERROR_CODES.MODEL_MISSING, `${context.command.words.join(" ")} needs a model: the scripted provider needs --script FILE`);
  }
  const configured = await commandLineModel(context, needs.scriptFile);
  if (configured) return { models: [configured.model], secrets: configured.secrets };
  if (needs.needsModel) {
    throw new OpenWorkerError(CLI_ERROR_CODES.MODEL_MISSING, `${context.command.words.join(" ")} needs a model and none was given`);
  }
  return { models: [], secrets: [] };
}

/**
 * The model provider the command line configures (`--provider`, `--base-url`, `--model`,
 * `--api-key-env`, and `--script` for the scripted one), built the way `run` uses it, with
 * the secrets it was handed; undefined when none is configured. `tools check` reads its
 * tool-name limit from it.
 */
export async function commandLineModel(
  context: CommandContext,
  scriptFile: string | undefined,
): Promise<{ model: ModelProvider; secrets: string[] } | undefined> {
  const { globals } = context;
  const provider = providerName(context, scriptFile);
  if (provider === undefined) return undefined;
  if (provider === "scripted") {
    const steps = scriptFile !== undefined ? await readScriptFile(scriptFile) : [];
    const { ScriptedProvider } = await import("@openworker/runtime/testing");
    return { model: new ScriptedProvider(steps), secrets: [] };
  }
  if (scriptFile !== undefined) throw usageError(`--script drives the scripted provider; drop it with --provider ${provider}`);
  if (provider === "openai") {
    if (!globals.baseUrl) throw usageError("--provider openai needs --base-url URL (e.g. http://127.0.0.1:11434/v1)");
    if (!globals.model) throw usageError("--provider openai needs --model NAME");
    const apiKey = globals.apiKeyEnv === undefined ? undefined : apiKeyFrom(context, globals.apiKeyEnv);
    const { OpenAICompatibleProvider } = await import("@openworker/model-openai");
    // A keyless local endpoint must not receive OPENAI_API_KEY by accident: the key is only what --api-key-env names.
    const model = new OpenAICompatibleProvider({ baseURL: globals.baseUrl, model: globals.model, apiKey: apiKey ?? null });
    return { model, secrets: apiKey ? [apiKey] : [] };
  }
  const vendor = AI_SDK_VENDORS[provider];
  if (!globals.model) throw usageError(`--provider ${provider} needs --model NAME (e.g. ${vendor.exampleModel})`);
  if (globals.apiKeyEnv === undefined)
    throw usageError(`--provider ${provider} needs --api-key-env NAME, the variable holding the ${vendor.vendor} API key (e.g. ${vendor.keyVariable})`);
  const apiKey = apiKeyFrom(context, globals.apiKeyEnv);
  // The base URL is always explicit: the vendor packages would otherwise take it from
  // ANTHROPIC_BASE_URL or OPENAI_BASE_URL and send the key wherever that points.
  const baseURL = globals.baseUrl ?? vendor.baseURL;
  const { fromAiSdk } = await import("@openworker/model-ai-sdk");
  const languageModel = await vendor.languageModel({ apiKey, baseURL }, globals.model);
  return { model: fromAiSdk(languageModel, { secrets: [apiKey] }), secrets: [apiKey] };
}

/** The `--provider` names served by an AI SDK provider package, with what the CLI needs to build each. */
const AI_SDK_VENDORS = {
  anthropic: {
    vendor: "Anthropic",
    keyVariable: "ANTHROPIC_API_KEY",
    exampleModel: "claude-sonnet-4-5",
    baseURL: "https://api.anthropic.com/v1",
    languageModel: async (settings: { apiKey: string; baseURL: string }, model: string) => (await import("@ai-sdk/anthropic")).createAnthropic(settings)(model),
  },
  "openai-responses": {
    vendor: "OpenAI",
    keyVariable: "OPENAI_API_KEY",
    exampleModel: "gpt-5-mini",
    baseURL: "https://api.openai.com/v1",
    languageModel: async (settings: { apiKey: string; baseURL: string }, model: string) =>
      (await import("@ai-sdk/openai")).createOpenAI(settings).responses(model),
  },
} as const;

function apiKeyFrom(context: CommandContext, variable: string): string {
  const apiKey = context.env[variable];
  if (!apiKey) throw new OpenWorkerError(CLI_ERROR_CODES.API_KEY_MISSING, `--api-key-env ${variable}: the variable ${variable} is not set or empty`);
  return apiKey;
}

/** `--provider` (which `--base-url` alone sets to openai), else scripted when `--script` is given. */
function providerName(context: CommandContext, scriptFile: string | undefined): ModelProviderName | undefined {
  return context.globals.provider ?? (scriptFile !== undefined ? "scripted" : undefined);
}
