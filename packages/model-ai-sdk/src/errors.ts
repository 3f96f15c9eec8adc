import { inspect } from "node:util";
import { APICallError } from "@ai-sdk/provider";
import { MODEL_PROVIDER_CODES } from "@openworker/runtime";
import { OpenWorkerError } from "@openworker/tools-sdk";

/** Which model a request went to, and what must never appear in an error about it. */
export interface ModelFacts {
  /** The provider id of the catalog rows (`"anthropic"`). */
  readonly provider: string;
  readonly model: string;
  /** Credentials handed to the adapter: redacted from vendor text, and no error keeps a cause holding one (E6). */
  readonly secrets: readonly string[];
}

const MAX_SERVER_TEXT = 500;

/**
 * Turns whatever an AI SDK model threw (or put in its stream's `error` part) into an
 * {@link OpenWorkerError} with code `MODEL_REQUEST_FAILED`. The message names the model,
 * the endpoint's origin (never its path or query) and the HTTP status; text from the
 * vendor is redacted before it is cut (vendors echo keys in 401 bodies), and the original
 * error is kept as `cause` only when no secret appears anywhere in it.
 */
export function toProviderError(error: unknown, facts: ModelFacts): OpenWorkerError {
  if (OpenWorkerError.isInstance(error)) return error;
  const cause = carriesSecret(error, facts.secrets) ? undefined : error;
  const failed = (reason: string, message: string, details: Record<string, unknown> = {}): OpenWorkerError =>
    new OpenWorkerError(MODEL_PROVIDER_CODES.REQUEST_FAILED, message, {
      cause,
      details: { reason, provider: facts.provider, model: facts.model, ...details },
    });

  if (APICallError.isInstance(error)) {
    const where = `${describeModel(facts)} at ${origin(error.url)}`;
    if (error.statusCode === undefined) {
      const detail = safeText(causeMessage(error), facts.secrets);
      return failed("connection", `${where} could not be reached${detail ? ` (${detail})` : ""}; check the base URL and that the service is up`);
    }
    const { code, message } = vendorError(error.responseBody, facts.secrets);
    return failed(
      "http",
      `${where} answered HTTP ${error.statusCode}${code ? ` (${code})` : ""}${message ? `: ${message}` : ""}${statusAdvice(error.statusCode)}`,
      { status: error.statusCode, ...(code ? { serverCode: code } : {}) },
    );
  }
  if (!(error instanceof Error) && isRecord(error)) {
    // A vendor's error event inside the stream (Anthropic's `overloaded_error`, OpenAI's `response.failed`).
    const { code, message } = vendorError(safeJson(error), facts.secrets);
    return failed(
      "stream-error",
      `${describeModel(facts)} reported an error in its answer${code ? ` (${code})` : ""}${message ? `: ${message}` : ""}; try again later`,
      code ? { serverCode: code } : {},
    );
  }
  const text = safeText(error instanceof Error ? error.message : String(error), facts.secrets);
  return failed("client", `${describeModel(facts)}: the request failed: ${text}`);
}

/** Whether the vendor refused the credentials (HTTP 401): the readiness observation failed (I1). */
export function credentialsRefused(error: unknown): boolean {
  return APICallError.isInstance(error) && error.statusCode === 401;
}

/** The rejection of an attempt whose signal aborted. */
export function cancelledError(facts: ModelFacts, reason: unknown): OpenWorkerError {
  return new OpenWorkerError(MODEL_PROVIDER_CODES.REQUEST_CANCELLED, `the request to ${describeModel(facts)} was cancelled before it completed`, {
    cause: reason,
    details: { provider: facts.provider, model: facts.model },
  });
}

/** The rejection of an attempt that passed `timeoutMs`, which bounds the whole streamed answer. */
export function timeoutError(facts: ModelFacts, timeoutMs: number): OpenWorkerError {
  return new OpenWorkerError(
    MODEL_PROVIDER_CODES.REQUEST_FAILED,
    `${describeModel(facts)} did not complete its answer within ${timeoutMs} ms (timeoutMs bounds the whole request, the streamed answer included); check that the service is up, or raise timeoutMs`,
    { details: { reason: "timeout", provider: facts.provider, model: facts.model, timeoutMs } },
  );
}

/**
 * The rejection of an answer the model did not finish: cut at its output-token limit,
 * stopped by a content filter, ended by an error, or a stream that stopped without its
 * finish. Its text and tool calls are dropped: a cut list of tool calls is not the
 * model's plan. Undefined for a finished answer.
 */
export function unfinishedAnswerError(facts: ModelFacts, finish: { unified: string; raw: string | undefined } | undefined): OpenWorkerError | undefined {
  if (finish !== undefined && (finish.unified === "stop" || finish.unified === "tool-calls" || finish.unified === "other")) return undefined;
  const why =
    finish === undefined
      ? { reason: "no-finish", text: "ended its stream without finishing the answer", advice: "try again; check the service's status if it persists" }
      : finish.unified === "length"
        ? { reason: "truncated", text: "stopped at its output-token limit", advice: "raise maxOutputTokens or shorten the conversation" }
        : finish.unified === "content-filter"
          ? { reason: "content-filter", text: "was stopped by the vendor's content filter", advice: "rephrase the request" }
          : { reason: finish.unified, text: `stopped early (${finish.unified})`, advice: "try again; check the service's status if it persists" };
  const raw = finish?.raw === undefined ? "" : ` (finish reason "${safeText(finish.raw, facts.secrets)}")`;
  return new OpenWorkerError(
    MODEL_PROVIDER_CODES.REQUEST_FAILED,
    `the answer of ${describeModel(facts)} ${why.text}${raw}; the partial answer was dropped and no tool call in it runs; ${why.advice}`,
    { details: { reason: why.reason, provider: facts.provider, model: facts.model, ...(finish ? { finishReason: finish.unified } : {}) } },
  );
}

/** An error of the adapter's options (`fromAiSdk(…)`), naming the field. */
export function configError(problem: string, field: string): OpenWorkerError {
  return new OpenWorkerError(MODEL_PROVIDER_CODES.CONFIG_INVALID, `fromAiSdk options: ${problem}`, { details: { field } });
}

/** Replaces every occurrence of a secret with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length > 0) result = result.split(secret).join("[redacted]");
  }
  return result;
}

export function describeModel(facts: Pick<ModelFacts, "provider" | "model">): string {
  return `model provider "${facts.provider}" (model "${facts.model}")`;
}

/** `scheme://host:port` of a URL: a path or query may carry a key (some vendors take one as `?key=`). */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "its endpoint";
  }
}

/** The vendor's own error code and message from its error body: `{ error: { type | code, message } }` (Anthropic, OpenAI and most others). */
function vendorError(body: string | undefined, secrets: readonly string[]): { code?: string; message?: string } {
  if (body === undefined || body.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { message: safeText(body, secrets) };
  }
  const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : isRecord(parsed) ? parsed : {};
  const rawCode = typeof error.code === "string" ? error.code : typeof error.type === "string" ? error.type : undefined;
  const code = rawCode !== undefined && /^[A-Za-z0-9_.:-]{1,64}$/.test(rawCode) && redact(rawCode, secrets) === rawCode ? rawCode : undefined;
  const message = typeof error.message === "string" ? safeText(error.message, secrets) : undefined;
  return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
}

function statusAdvice(status: number): string {
  if (status === 401 || status === 403) return "; check the API key the provider was created with";
  if (status === 404) return "; check the model name and the provider's base URL";
  if (status === 429) return "; the vendor is rate-limiting this key: wait, then try again";
  if (status >= 500) return "; the vendor failed: try again later";
  return "";
}

function causeMessage(error: Error): string {
  const cause: unknown = error.cause;
  if (cause instanceof Error) return cause.message;
  return error.message;
}

/** Server text fit for a message: redacted first, then cut, so no cut leaves part of a secret (E6). */
function safeText(text: string, secrets: readonly string[]): string {
  const redacted = redact(text, secrets);
  return redacted.length <= MAX_SERVER_TEXT ? redacted : `${redacted.slice(0, MAX_SERVER_TEXT)}…`;
}

/** Whether a secret appears anywhere in the error: its message, fields, cause chain. */
function carriesSecret(error: unknown, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return false;
  let text: string;
  try {
    text = inspect(error, { depth: 8, showHidden: true, getters: false, maxStringLength: null, maxArrayLength: null });
  } catch {
    return true;
  }
  return secrets.some((secret) => secret.length > 0 && text.includes(secret));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
