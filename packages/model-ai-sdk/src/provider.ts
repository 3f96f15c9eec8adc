import type { LanguageModelV4, LanguageModelV4CallOptions, SharedV4ProviderOptions } from "@ai-sdk/provider";
import {
  MODEL_PROVIDER_CODES,
  type ModelCatalogRow,
  type ModelProvider,
  type ModelReadiness,
  type ModelRequest,
  type ModelResponse,
  type ModelToolDefinition,
} from "@openworker/runtime";
import { OpenWorkerError, utf8Bytes } from "@openworker/tools-sdk";
import {
  cancelledError,
  configError,
  credentialsRefused,
  describeModel,
  timeoutError,
  toProviderError,
  unfinishedAnswerError,
  type ModelFacts,
} from "./errors.js";
import { toPrompt, toTools, type ImageDelivery } from "./prompt.js";
import { readStream, StreamErrorPart, type StreamedAnswer } from "./stream.js";

/**
 * What {@link fromAiSdk} drives: one AI SDK language model (`anthropic("claude-sonnet-4-5")`),
 * or a function that makes one per model id (`anthropic`, `(id) => openai.responses(id)`),
 * so that sessions can pick among `models`.
 */
export type AiSdkModelSource = LanguageModelV4 | ((modelId: string) => LanguageModelV4);

/**
 * Options of {@link fromAiSdk}.
 *
 * @example
 * ```ts
 * const options: AiSdkProviderOptions = { secrets: [apiKey], maxOutputTokens: 4096 };
 * ```
 */
export interface AiSdkProviderOptions {
  /** The default model id. Required with a model factory; with a model object it is that model's `modelId`. */
  readonly model?: string;
  /** More model ids the catalog lists (I1), with a model factory only. */
  readonly models?: readonly string[];
  /** The provider id of catalog rows and sessions' `model.provider`. Default: the vendor part of the model's `provider` (`"anthropic"` for `"anthropic.messages"`). */
  readonly id?: string;
  /**
   * The credentials the AI SDK provider was created with (its API key, header values). The
   * adapter cannot read them out of the model, so the host names them: the runtime then
   * redacts them from everything it writes, and no error of the adapter carries them (E6).
   */
  readonly secrets?: readonly string[];
  /** The readiness observation (I1) while the vendor accepts the credentials. Default `"api-key"` when `secrets` are given, else none (`undefined`). */
  readonly accountType?: string;
  /** Longest tool name the model accepts (N4). Default 64, the limit of OpenAI, Anthropic and Google. */
  readonly maxToolNameLength?: number;
  /**
   * Where a tool result's images go (T4): `"tool-result"` (inside the tool result),
   * `"message"` (a user message after the tool results) or `false` (not sent: a text-only
   * model). Default `"tool-result"` for Anthropic and the OpenAI Responses API, whose tool
   * results take images, `"message"` for every other model.
   */
  readonly images?: ImageDelivery;
  /** Deadline of one `complete`, the whole streamed answer included, in milliseconds. Default 120 000. */
  readonly timeoutMs?: number;
  /** The most tokens one answer may have (`maxOutputTokens` of the specification). Default: the vendor package's. */
  readonly maxOutputTokens?: number;
  readonly temperature?: number;
  /** Vendor options passed through on every request (`{ anthropic: { … } }`, `{ openai: { … } }`). */
  readonly providerOptions?: SharedV4ProviderOptions;
}

const DEFAULT_MAX_TOOL_NAME_LENGTH = 64;
const DEFAULT_TIMEOUT_MS = 120_000;
// Node's timers hold at most a signed 32-bit count of milliseconds.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A {@link ModelProvider} over any AI SDK language model (the provider specification v4:
 * every `@ai-sdk/*` 4.x provider, `ai` 7's wrapped and custom models). Each `complete` is
 * one streamed model call (`doStream`) with the selected tools named by alias (N2), the
 * coworker instructions plus this attempt's live facts as the system prompt (L1, L2), the
 * conversation with tool results, tool errors and the images the runtime released after
 * their consent recheck (T4). The runtime owns the loop: the adapter never runs a tool.
 *
 * @example
 * ```ts
 * import { createAnthropic } from "@ai-sdk/anthropic";
 * const anthropic = createAnthropic({ apiKey });
 * const runtime = await Runtime.openWithRegistry(registry, {
 *   models: [fromAiSdk(anthropic("claude-sonnet-4-5"), { secrets: [apiKey] })],
 * });
 * ```
 */
export function fromAiSdk(source: AiSdkModelSource, options: AiSdkProviderOptions = {}): AiSdkModelProvider {
  return new AiSdkModelProvider(source, options);
}

/** The provider {@link fromAiSdk} returns. */
export class AiSdkModelProvider implements ModelProvider {
  readonly id: string;
  readonly defaultModel: string;
  readonly maxToolNameLength: number;
  readonly #make: (modelId: string) => LanguageModelV4;
  readonly #models: readonly string[];
  readonly #secrets: readonly string[];
  readonly #readiness: ModelReadiness | undefined;
  readonly #images: ImageDelivery;
  readonly #timeoutMs: number;
  readonly #callOptions: Pick<LanguageModelV4CallOptions, "maxOutputTokens" | "temperature" | "providerOptions">;
  /** Whether the vendor's last answer refused the credentials (401); a success clears it. */
  #credentialsRefused = false;

  constructor(source: AiSdkModelSource, options: AiSdkProviderOptions = {}) {
    const { make, first, models } = modelsOf(source, options);
    this.#make = make;
    this.defaultModel = first.modelId;
    this.#models = models;
    this.id = nonEmpty(options.id ?? first.provider.split(".")[0] ?? "", "id");
    this.maxToolNameLength = positiveInteger(options.maxToolNameLength ?? DEFAULT_MAX_TOOL_NAME_LENGTH, "maxToolNameLength");
    this.#timeoutMs = positiveInteger(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, "timeoutMs", MAX_TIMER_MS);
    this.#images = imageDelivery(options.images, first.provider);
    this.#secrets = Object.freeze([...new Set((options.secrets ?? []).filter((secret) => typeof secret === "string" && secret.length > 0))]);
    const accountType = options.accountType ?? (this.#secrets.length > 0 ? "api-key" : undefined);
    // Fixed here so that reading readiness later is synchronous and does no I/O (I1).
    this.#readiness = accountType === undefined ? undefined : Object.freeze({ accountType: nonEmpty(accountType, "accountType") });
    this.#callOptions = {
      ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: positiveInteger(options.maxOutputTokens, "maxOutputTokens") }),
      ...(options.temperature === undefined ? {} : { temperature: finiteNumber(options.temperature, "temperature") }),
      ...(options.providerOptions === undefined ? {} : { providerOptions: options.providerOptions }),
    };
  }

  /**
   * Runs one attempt: one streamed call of the model, read to its end, aborted with
   * `request.signal` or once `timeoutMs` has passed, whichever comes first. Rejects with
   * `ALIAS_TOO_LONG_FOR_PROVIDER` (nothing sent), `MODEL_REQUEST_CANCELLED` or
   * `MODEL_REQUEST_FAILED` (the vendor's error, an unfinished answer, the deadline).
   */
  async complete(request: ModelRequest): Promise<ModelResponse> {
    const modelId = request.model.length > 0 ? request.model : this.defaultModel;
    const facts: ModelFacts = { provider: this.id, model: modelId, secrets: this.#secrets };
    this.#refuseLongAliases(request.tools, facts);
    const model = this.#modelFor(modelId, facts);
    if (request.signal.aborted) throw cancelledError(facts, request.signal.reason);

    const deadline = AbortSignal.timeout(this.#timeoutMs);
    const signal = AbortSignal.any([request.signal, deadline]);
    let answer: StreamedAnswer;
    try {
      const { stream } = await model.doStream({
        ...this.#callOptions,
        prompt: toPrompt(request, this.#images),
        ...(request.tools.length > 0 ? { tools: toTools(request.tools), toolChoice: { type: "auto" as const } } : {}),
        abortSignal: signal,
      });
      answer = await readStream(stream);
      this.#credentialsRefused = false;
    } catch (error) {
      if (request.signal.aborted) throw cancelledError(facts, request.signal.reason);
      if (deadline.aborted) throw timeoutError(facts, this.#timeoutMs);
      const vendorError = error instanceof StreamErrorPart ? error.error : error;
      if (credentialsRefused(vendorError)) this.#credentialsRefused = true;
      throw toProviderError(vendorError, facts);
    }
    const unfinished = unfinishedAnswerError(facts, answer.finish);
    if (unfinished !== undefined) throw unfinished;
    return { text: answer.text, toolCalls: answer.toolCalls, ...(answer.usage ? { usage: answer.usage } : {}) };
  }

  /** The credentials named in `secrets`, for the runtime to redact (E6). */
  secrets(): readonly string[] {
    return this.#secrets;
  }

  /** The configured models (I1). No I/O: the vendor is not asked. */
  listModels(): readonly ModelCatalogRow[] {
    return this.#models.map((model) => ({ provider: this.id, model }));
  }

  /**
   * `{ accountType }` (see the option) for a model of the catalog; `undefined` for any
   * other model, when no observation was configured, and while the vendor's last answer
   * refused the credentials (HTTP 401) until a request succeeds again. Synchronous, no
   * I/O, and never execution authorization (I1).
   */
  readModelReadiness(model: string): ModelReadiness | undefined {
    return this.#models.includes(model) && !this.#credentialsRefused ? this.#readiness : undefined;
  }

  #modelFor(modelId: string, facts: ModelFacts): LanguageModelV4 {
    if (!this.#models.includes(modelId)) {
      throw new OpenWorkerError(
        MODEL_PROVIDER_CODES.REQUEST_FAILED,
        `${describeModel(facts)} is not offered: this provider offers ${this.#models.map((model) => `"${model}"`).join(", ")}; pick one of those, or list the model in the models option (with a model factory: fromAiSdk(anthropic, { model, models }))`,
        { details: { reason: "unknown-model", provider: this.id, model: modelId, models: this.#models } },
      );
    }
    return this.#make(modelId);
  }

  #refuseLongAliases(tools: readonly ModelToolDefinition[], facts: ModelFacts): void {
    const tooLong = tools.filter((tool) => utf8Bytes(tool.name) > this.maxToolNameLength).map((tool) => tool.name);
    const first = tooLong[0];
    if (first === undefined) return;
    const others = tooLong.length > 1 ? ` (and ${tooLong.length - 1} more: ${tooLong.slice(1).join(", ")})` : "";
    throw new OpenWorkerError(
      MODEL_PROVIDER_CODES.ALIAS_TOO_LONG,
      `tool alias "${first}" is ${utf8Bytes(first)} bytes; ${describeModel(facts)} accepts tool names of at most ${this.maxToolNameLength} (maxToolNameLength)${others}; shorten the tool's qualified name or deselect it`,
      { details: { aliases: tooLong, limit: this.maxToolNameLength, provider: this.id } },
    );
  }
}

/** The model factory, the default model and the catalog, from either form of source. */
function modelsOf(
  source: AiSdkModelSource,
  options: AiSdkProviderOptions,
): { make: (modelId: string) => LanguageModelV4; first: LanguageModelV4; models: readonly string[] } {
  if (typeof source === "function") {
    const model = nonEmpty(options.model ?? "", "model");
    const first = checkedModel(source(model), "the model factory");
    const cache = new Map<string, LanguageModelV4>([[model, first]]);
    const make = (modelId: string): LanguageModelV4 => {
      let made = cache.get(modelId);
      if (made === undefined) {
        made = checkedModel(source(modelId), "the model factory");
        cache.set(modelId, made);
      }
      return made;
    };
    for (const [index, name] of (options.models ?? []).entries()) nonEmpty(name, `models[${index}]`);
    return { make, first, models: Object.freeze([...new Set([model, ...(options.models ?? [])])]) };
  }
  const first = checkedModel(source, "the model");
  if (options.model !== undefined && options.model !== first.modelId) {
    throw configError(`model "${options.model}" differs from the given model's id "${first.modelId}"; pass a model factory to offer several models`, "model");
  }
  if (options.models !== undefined && options.models.some((model) => model !== first.modelId)) {
    throw configError(
      "models lists other models than the given one; pass a model factory (fromAiSdk(anthropic, { model, models })) to offer several",
      "models",
    );
  }
  return { make: () => first, first, models: Object.freeze([first.modelId]) };
}

function checkedModel(model: unknown, what: string): LanguageModelV4 {
  const candidate = model as Partial<LanguageModelV4> | undefined;
  if (typeof candidate !== "object" || candidate === null || typeof candidate.doStream !== "function") {
    throw configError(`${what} is not an AI SDK language model (it has no doStream); pass e.g. anthropic("claude-sonnet-4-5")`, "model");
  }
  if (candidate.specificationVersion !== "v4") {
    throw configError(
      `${what} implements the AI SDK provider specification ${JSON.stringify(candidate.specificationVersion)}; fromAiSdk drives "v4" models: upgrade the @ai-sdk/* provider package to 4.x (openai-compatible: 3.x)`,
      "model",
    );
  }
  if (typeof candidate.modelId !== "string" || candidate.modelId.length === 0 || typeof candidate.provider !== "string") {
    throw configError(`${what} has no modelId or provider`, "model");
  }
  return candidate as LanguageModelV4;
}

/** Vendors whose tool results take images (see the `images` option). */
function imageDelivery(option: ImageDelivery | undefined, provider: string): ImageDelivery {
  if (option === undefined) return provider.startsWith("anthropic.") || provider === "openai.responses" ? "tool-result" : "message";
  if (option !== "tool-result" && option !== "message" && option !== false) {
    throw configError(`images must be "tool-result", "message" or false (got ${JSON.stringify(option)})`, "images");
  }
  return option;
}

function nonEmpty(value: string, field: string): string {
  if (typeof value !== "string" || value.length === 0) throw configError(`${field} must be a non-empty string`, field);
  return value;
}

function positiveInteger(value: number, field: string, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isSafeInteger(value) || value <= 0 || value > max) {
    throw configError(`${field} must be a positive integer${max === Number.MAX_SAFE_INTEGER ? "" : ` of at most ${max}`} (got ${value})`, field);
  }
  return value;
}

function finiteNumber(value: number, field: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) throw configError(`${field} must be a finite number (got ${value})`, field);
  return value;
}
