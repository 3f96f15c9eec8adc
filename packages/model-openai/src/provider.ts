import { setTimeout as delay } from "node:timers/promises";
import { OpenWorkerError, utf8Bytes } from "@openworker/tools-sdk";
import { OpenAI } from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import {
  cancelledError,
  credentialsRefused,
  incompleteCompletionError,
  OPENAI_PROVIDER_CODES,
  retryDelayMs,
  timeoutError,
  toProviderError,
  unreadableCompletionError,
  type EndpointFacts,
} from "./errors.js";
import { toChatMessages, toChatTools } from "./request.js";
import { boundedFetch, readCompletion } from "./response.js";
import type { ModelCatalogRow, ModelProvider, ModelReadiness, ModelRequest, ModelResponse, ModelToolDefinition } from "@openworker/runtime";

/**
 * How to reach an OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, LM Studio, …).
 *
 * @example
 * ```ts
 * const options: OpenAICompatibleOptions = { baseURL: "https://api.openai.com/v1", model: "gpt-4.1-mini", apiKey: key };
 * ```
 */
export interface OpenAICompatibleOptions {
  /** The API root, e.g. `http://127.0.0.1:11434/v1` (Ollama) or `https://api.openai.com/v1`. */
  readonly baseURL: string;
  /**
   * The API key, sent as `Authorization: Bearer …`. Default: `process.env.OPENAI_API_KEY`,
   * else `"not-needed"` for keyless local servers. Set it explicitly for any endpoint that
   * is not OpenAI's, so an OpenAI key from the environment is not sent elsewhere; `null`
   * declares a keyless endpoint and never reads the environment.
   */
  readonly apiKey?: string | null | undefined;
  /** The model used when a session does not name one. */
  readonly model: string;
  /** The models listed in the catalog (I1). Default: `[model]`; `model` is always listed first. */
  readonly models?: readonly string[];
  /** Longest tool name the endpoint accepts. Default 64 (OpenAI's limit). */
  readonly maxToolNameLength?: number;
  /**
   * Most tools one request may carry. Default 128 (OpenAI's limit: it refuses more with
   * `array_above_max_length`); a turn with more fails before anything is sent, naming the
   * count, instead of with the server's 400.
   */
  readonly maxTools?: number;
  /**
   * Deadline of one `complete`, in milliseconds: connecting, waiting for the answer,
   * reading its body and any retries all fit in it. Default 120 000; at most 2 147 483 647
   * (Node's longest timer).
   */
  readonly timeoutMs?: number;
  /**
   * Largest response body read, in bytes. Default 33 554 432 (32 MiB). A longer answer
   * fails the attempt (`details.reason: "too-large"`) instead of being buffered.
   */
  readonly maxResponseBytes?: number;
  /**
   * Retries of a request that got no usable response (connection error, 408/409/429/5xx).
   * Default 0. A retry happens inside one `complete` call, before anything reaches the
   * runtime, so no tool call is ever replayed (E4); it may bill twice on a server that
   * did the work but failed to answer. Retries and their waits stay within `timeoutMs`.
   */
  readonly maxRetries?: number;
  /** Extra HTTP headers on every request. Their values are secrets: see `secrets()`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The provider id in catalog rows. Default `"openai"`; set it to tell two endpoints apart. */
  readonly id?: string;
  /**
   * Whether the model takes images (`image_url` parts). Default `true`. `false` for a
   * text-only model (many local ones refuse a request holding an image): a tool result's
   * images are not sent, and its tool message tells the model how many were left out.
   */
  readonly images?: boolean;
}

const DEFAULTS = Object.freeze({
  maxToolNameLength: 64,
  maxTools: 128,
  timeoutMs: 120_000,
  maxResponseBytes: 32 * 1024 * 1024,
  maxRetries: 0,
  id: "openai",
});
// Node's timers hold at most a signed 32-bit count of milliseconds; a longer one fires after 1 ms.
const MAX_TIMER_MS = 2 ** 31 - 1;
const KEYLESS_PLACEHOLDER = "not-needed";
// Header values this short are content types and versions, not credentials; redacting them would garble messages.
const MIN_SECRET_HEADER_LENGTH = 8;

/**
 * A {@link ModelProvider} for any endpoint speaking OpenAI chat completions. Each
 * `complete` is one non-streaming `POST /chat/completions` with the selected tools named
 * by alias, the coworker instructions plus this attempt's live facts as the system
 * message (L1, L2), and the attempt's signal.
 *
 * @example
 * ```ts
 * const provider = new OpenAICompatibleProvider({
 *   baseURL: "http://127.0.0.1:11434/v1",
 *   model: "qwen2.5:7b",
 * });
 * provider.listModels(); // [{ provider: "openai", model: "qwen2.5:7b" }]
 * ```
 */
export class OpenAICompatibleProvider implements ModelProvider {
  readonly id: string;
  readonly defaultModel: string;
  readonly maxToolNameLength: number;
  /** `scheme://host:port` of the endpoint, for diagnostics; never carries credentials. */
  readonly origin: string;
  readonly #client: OpenAI;
  readonly #models: readonly string[];
  readonly #readiness: ModelReadiness;
  /** Whether the endpoint's last answer refused the credentials (401); a success clears it. */
  #credentialsRefused = false;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #maxTools: number;
  readonly #images: boolean;
  /** Every credential handed to the provider, for `secrets()`. */
  readonly #handed: readonly string[];
  /** Those redacted from error text: the key, and header values long enough to be credentials. */
  readonly #redacted: readonly string[];

  constructor(options: OpenAICompatibleOptions) {
    const url = parseBaseURL(options.baseURL);
    this.id = nonEmpty(options.id ?? DEFAULTS.id, "id");
    this.defaultModel = nonEmpty(options.model, "model");
    this.maxToolNameLength = positiveInteger(options.maxToolNameLength ?? DEFAULTS.maxToolNameLength, "maxToolNameLength");
    this.#timeoutMs = positiveInteger(options.timeoutMs ?? DEFAULTS.timeoutMs, "timeoutMs", MAX_TIMER_MS);
    const maxResponseBytes = positiveInteger(options.maxResponseBytes ?? DEFAULTS.maxResponseBytes, "maxResponseBytes");
    this.#maxRetries = nonNegativeInteger(options.maxRetries ?? DEFAULTS.maxRetries, "maxRetries");
    this.#maxTools = positiveInteger(options.maxTools ?? DEFAULTS.maxTools, "maxTools");
    this.#images = boolean(options.images ?? true, "images");
    this.origin = url.origin;
    this.#models = catalogModels(this.defaultModel, options.models);

    const configuredKey = options.apiKey === null ? undefined : (nonEmptyOrUndefined(options.apiKey) ?? nonEmptyOrUndefined(process.env.OPENAI_API_KEY));
    // Readiness is fixed here so that reading it later is synchronous and does no I/O (I1).
    this.#readiness = Object.freeze({ accountType: configuredKey === undefined ? "local" : "api-key" });
    const headers = { ...options.headers };
    // The client adds OPENAI_CUSTOM_HEADERS to every request (it offers no way to stop it): those values are handed to us too.
    const headerValues = [...Object.values(headers), ...customHeaderValues(process.env.OPENAI_CUSTOM_HEADERS)].filter(
      (value): value is string => typeof value === "string" && value.length > 0,
    );
    const key = configuredKey === undefined ? [] : [configuredKey];
    this.#handed = Object.freeze([...new Set([...key, ...headerValues])]);
    this.#redacted = Object.freeze([...new Set([...key, ...headerValues.filter((value) => value.length >= MIN_SECRET_HEADER_LENGTH)])]);

    this.#client = new OpenAI({
      baseURL: url.href,
      apiKey: configuredKey ?? KEYLESS_PLACEHOLDER,
      // The client would otherwise read these from the environment and send them to
      // whatever endpoint this is; a host that needs them passes them in `headers`.
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      timeout: this.#timeoutMs,
      // Retries are ours (#send): the client's would wait whatever Retry-After says, past any deadline.
      maxRetries: 0,
      fetch: boundedFetch(maxResponseBytes),
      defaultHeaders: headers,
      // Errors reach the runtime as OpenWorkerError; the client's own console output would bypass it.
      logLevel: "off",
    });
  }

  /**
   * Runs one attempt: one chat-completions request (and its retries, if any), aborted with
   * `request.signal` or when `timeoutMs` has passed since the call, whichever comes first.
   * Rejects with `ALIAS_TOO_LONG_FOR_PROVIDER` (nothing sent), `MODEL_REQUEST_CANCELLED`
   * or `MODEL_REQUEST_FAILED`.
   */
  async complete(request: ModelRequest): Promise<ModelResponse> {
    const model = request.model.length > 0 ? request.model : this.defaultModel;
    const endpoint: EndpointFacts = { origin: this.origin, model, secrets: this.#redacted };
    this.#refuseUnsendableTools(request.tools);
    if (request.signal.aborted) throw cancelledError(endpoint, request.signal.reason);

    const body: ChatCompletionCreateParamsNonStreaming = {
      model,
      messages: toChatMessages(request, { images: this.#images }),
      // The API rejects `tool_choice` without tools.
      ...(request.tools.length > 0 ? { tools: toChatTools(request.tools), tool_choice: "auto" as const } : {}),
    };
    // One deadline for the whole request: the client's own timeout stops at the headers,
    // and a body that trickles in byte by byte would otherwise hold the attempt for ever.
    const deadline = new AbortController();
    const deadlineAt = Date.now() + this.#timeoutMs;
    const timer = setTimeout(() => deadline.abort(), this.#timeoutMs);
    const forwardAbort = (): void => deadline.abort(request.signal.reason);
    request.signal.addEventListener("abort", forwardAbort, { once: true });
    let completion: unknown;
    try {
      completion = await this.#send(body, deadline.signal, deadlineAt);
      this.#credentialsRefused = false;
    } catch (error) {
      if (request.signal.aborted) throw cancelledError(endpoint, request.signal.reason);
      if (deadline.signal.aborted) throw timeoutError(endpoint, this.#timeoutMs);
      if (credentialsRefused(error)) this.#credentialsRefused = true;
      throw toProviderError(error, endpoint);
    } finally {
      clearTimeout(timer);
      request.signal.removeEventListener("abort", forwardAbort);
    }
    const reading = readCompletion(completion);
    if (!reading.ok) throw unreadableCompletionError(endpoint, reading.problem);
    const incomplete = incompleteCompletionError(endpoint, reading.finishReason);
    if (incomplete !== undefined) throw incomplete;
    return reading.response;
  }

  /**
   * The credentials this provider was handed: the API key (from `apiKey` or
   * `OPENAI_API_KEY`) and the value of every header it sends (`headers`, and
   * `OPENAI_CUSTOM_HEADERS`, which the client adds). The runtime redacts them from
   * everything it writes (E6). The keyless placeholder is not a secret and is not listed.
   */
  secrets(): readonly string[] {
    return this.#handed;
  }

  /** The configured models (I1). No I/O: the endpoint is not asked. */
  listModels(): readonly ModelCatalogRow[] {
    return this.#models.map((model) => ({ provider: this.id, model }));
  }

  /**
   * `{ accountType: "api-key" }` when a key was configured (option or `OPENAI_API_KEY`),
   * `{ accountType: "local" }` for a keyless endpoint, `undefined` for a model not in the
   * catalog, and `undefined` while the endpoint's last answer refused the credentials
   * (HTTP 401: a failed observation) until a request succeeds again. Synchronous,
   * no I/O (what it reports was observed by requests already made), and never execution
   * authorization (I1).
   */
  readModelReadiness(model: string): ModelReadiness | undefined {
    return this.#models.includes(model) && !this.#credentialsRefused ? this.#readiness : undefined;
  }

  /**
   * Sends the request, retrying what {@link retryDelayMs} allows up to `maxRetries` times
   * (E4). A wait that would end past the deadline is not taken: the error that asked for
   * it is the attempt's, at once, instead of a sleep the deadline would cut anyway.
   */
  async #send(body: ChatCompletionCreateParamsNonStreaming, signal: AbortSignal, deadlineAt: number): Promise<unknown> {
    for (let retry = 0; ; retry += 1) {
      try {
        return await this.#client.chat.completions.create(body, { signal });
      } catch (error) {
        if (signal.aborted || retry >= this.#maxRetries) throw error;
        const wait = retryDelayMs(error, retry);
        if (wait === undefined || Date.now() + wait >= deadlineAt) throw error;
        await delay(wait, undefined, { signal });
      }
    }
  }

  #refuseUnsendableTools(tools: readonly ModelToolDefinition[]): void {
    if (tools.length > this.#maxTools) {
      throw new OpenWorkerError(
        OPENAI_PROVIDER_CODES.TOO_MANY_TOOLS,
        `the turn selects ${tools.length} tools; model provider "${this.id}" at ${this.origin} accepts at most ${this.#maxTools} in one request (maxTools); select fewer tools (a v1 bundle takes every tool a server publishes: list them in a v3 tools.json)`,
        { details: { tools: tools.length, limit: this.#maxTools, provider: this.id } },
      );
    }
    const tooLong = tools.filter((tool) => utf8Bytes(tool.name) > this.maxToolNameLength).map((tool) => tool.name);
    const first = tooLong[0];
    if (first === undefined) return;
    const others = tooLong.length > 1 ? ` (and ${tooLong.length - 1} more: ${tooLong.slice(1).join(", ")})` : "";
    throw new OpenWorkerError(
      OPENAI_PROVIDER_CODES.ALIAS_TOO_LONG,
      `tool alias "${first}" is ${utf8Bytes(first)} bytes; model provider "${this.id}" at ${this.origin} accepts tool names of at most ${this.maxToolNameLength} (maxToolNameLength)${others}; shorten the tool's qualified name or deselect it`,
      { details: { aliases: tooLong, limit: this.maxToolNameLength, provider: this.id } },
    );
  }
}

function parseBaseURL(baseURL: string): URL {
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch (cause) {
    // The text is not echoed: a mistyped URL may still hold a credential.
    throw configError(`baseURL is not an absolute URL; use e.g. "http://127.0.0.1:11434/v1"`, "baseURL", cause);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw configError(`baseURL must use http or https (got "${url.protocol}")`, "baseURL");
  }
  if (url.username.length > 0 || url.password.length > 0) {
    throw configError("baseURL must not carry credentials; pass the key as apiKey or in headers", "baseURL");
  }
  return url;
}

/** The values of `OPENAI_CUSTOM_HEADERS` (`Name: value` lines), parsed as the openai client parses them. */
function customHeaderValues(text: string | undefined): string[] {
  if (text === undefined) return [];
  return text
    .trim()
    .split("\n")
    .filter((line) => line.includes(":"))
    .map((line) => line.slice(line.indexOf(":") + 1).trim());
}

function catalogModels(model: string, models: readonly string[] | undefined): readonly string[] {
  for (const [index, name] of (models ?? []).entries()) nonEmpty(name, `models[${index}]`);
  return Object.freeze([...new Set([model, ...(models ?? [])])]);
}

function nonEmpty(value: string, field: string): string {
  if (typeof value !== "string" || value.length === 0) throw configError(`${field} must be a non-empty string`, field);
  return value;
}

function nonEmptyOrUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.length === 0 ? undefined : value;
}

function positiveInteger(value: number, field: string, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isSafeInteger(value) || value <= 0 || value > max) {
    throw configError(`${field} must be a positive integer${max === Number.MAX_SAFE_INTEGER ? "" : ` of at most ${max}`} (got ${value})`, field);
  }
  return value;
}

function boolean(value: boolean, field: string): boolean {
  if (typeof value !== "boolean") throw configError(`${field} must be true or false (got ${JSON.stringify(value)})`, field);
  return value;
}

function nonNegativeInteger(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw configError(`${field} must be a non-negative integer (got ${value})`, field);
  return value;
}

function configError(problem: string, field: string, cause?: unknown): OpenWorkerError {
  return new OpenWorkerError(OPENAI_PROVIDER_CODES.CONFIG_INVALID, `OpenAI-compatible provider options: ${problem}`, {
    cause,
    details: { field },
  });
}
