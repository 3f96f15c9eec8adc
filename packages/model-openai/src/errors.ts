import { inspect } from "node:util";
import { MODEL_PROVIDER_CODES } from "@openworker/runtime";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import { ResponseTooLargeError } from "./response.js";

/**
 * Stable error codes of the OpenAI-compatible provider: the runtime's
 * `MODEL_PROVIDER_CODES`, which every model provider package shares.
 *
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error, OPENAI_PROVIDER_CODES.REQUEST_CANCELLED)) return;
 * ```
 */
export const OPENAI_PROVIDER_CODES = MODEL_PROVIDER_CODES;

/** Where a request went and what must never appear in an error about it. */
export interface EndpointFacts {
  /** `scheme://host:port` of the endpoint: the path and any credentials in the URL are left out. */
  readonly origin: string;
  readonly model: string;
  /** Secrets handed to the provider (API key, header values): redacted from server text (E6). */
  readonly secrets: readonly string[];
}

const MAX_SERVER_TEXT = 500;

/**
 * Turns whatever the openai client threw into an {@link OpenWorkerError}. Messages name
 * the HTTP status and the endpoint origin, never the API key: text from the server is
 * redacted before it is cut (servers echo keys in 401 bodies), and the client's own error
 * is kept as `cause` only when none of the secrets appears in it, its headers included.
 * Cancellation and the request's deadline are told apart by the caller, which owns the
 * signals ({@link cancelledError}, {@link timeoutError}).
 */
export function toProviderError(error: unknown, endpoint: EndpointFacts): OpenWorkerError {
  if (OpenWorkerError.isInstance(error)) return error;

  const where = describeEndpoint(endpoint);
  const cause = carriesSecret(error, endpoint.secrets) ? undefined : error;
  const failed = (reason: string, message: string, details: Record<string, unknown> = {}): OpenWorkerError =>
    new OpenWorkerError(OPENAI_PROVIDER_CODES.REQUEST_FAILED, message, {
      cause,
      details: { reason, origin: endpoint.origin, model: endpoint.model, ...details },
    });

  const tooLarge = findTooLarge(error);
  if (tooLarge !== undefined) {
    return failed(
      "too-large",
      `${where} sent a response larger than ${tooLarge.limit} bytes (maxResponseBytes); the rest was not read; check that baseURL is a chat-completions endpoint, or raise maxResponseBytes`,
      { limit: tooLarge.limit },
    );
  }
  if (error instanceof APIConnectionTimeoutError) {
    return failed("timeout", `${where} did not answer in time; check that the server is up, or raise timeoutMs`);
  }
  if (error instanceof APIConnectionError) {
    const detail = safeText(describeCause(error), endpoint.secrets);
    return failed("connection", `${where} could not be reached${detail ? ` (${detail})` : ""}; check baseURL and that the server is running`);
  }
  if (error instanceof APIError) {
    const status = error.status ?? "unknown";
    const serverText = safeText(serverMessage(error), endpoint.secrets);
    const serverCode = serverErrorCode(error, endpoint.secrets);
    return failed(
      "http",
      `${where} answered HTTP ${status}${serverCode ? ` (${serverCode})` : ""}${serverText ? `: ${serverText}` : ""}${statusAdvice(error.status)}`,
      { status: error.status, requestId: error.requestID ?? undefined, ...(serverCode ? { serverCode } : {}) },
    );
  }
  const text = safeText(error instanceof Error ? error.message : String(error), endpoint.secrets);
  return failed("client", `${where} request failed: ${text}`);
}

/**
 * The rejection of an attempt that passed its deadline (`timeoutMs`), which covers the
 * whole request: connecting, waiting, reading the body, and any retries.
 */
/**
 * Whether the endpoint refused the credentials (HTTP 401): the provider's readiness
 * observation has failed (I1). Not 403: it often refuses one model to a key that works
 * for the others ("model not permitted"), which says nothing of the provider's readiness.
 */
export function credentialsRefused(error: unknown): boolean {
  return error instanceof APIError && error.status === 401;
}

export function timeoutError(endpoint: EndpointFacts, timeoutMs: number): OpenWorkerError {
  return new OpenWorkerError(
    OPENAI_PROVIDER_CODES.REQUEST_FAILED,
    `${describeEndpoint(endpoint)} did not complete its answer within ${timeoutMs} ms (timeoutMs bounds the whole request, body and retries included); check that the server is up, or raise timeoutMs`,
    { details: { reason: "timeout", origin: endpoint.origin, model: endpoint.model, timeoutMs } },
  );
}

/**
 * The rejection of a completion the server stopped early: `finish_reason` `"length"` (cut
 * at the output-token limit) or `"content_filter"`. Its text and tool calls are dropped:
 * a cut answer is not an answer, and a cut list of tool calls is not the model's plan.
 * Undefined for any other finish reason.
 */
export function incompleteCompletionError(endpoint: EndpointFacts, finishReason: string | undefined): OpenWorkerError | undefined {
  const why =
    finishReason === "length"
      ? { reason: "truncated", text: "stopped at its output-token limit", advice: "raise the server's output-token limit or shorten the conversation" }
      : finishReason === "content_filter"
        ? { reason: "content-filter", text: "was stopped by the server's content filter", advice: "rephrase the request" }
        : undefined;
  if (why === undefined) return undefined;
  return new OpenWorkerError(
    OPENAI_PROVIDER_CODES.REQUEST_FAILED,
    `the answer of ${describeEndpoint(endpoint)} ${why.text} (finish_reason "${finishReason}"); the partial answer was dropped and no tool call in it runs; ${why.advice}`,
    { details: { reason: why.reason, finishReason, origin: endpoint.origin, model: endpoint.model } },
  );
}

/**
 * How long to wait before retrying the request that failed with `error` (E4), or
 * `undefined` when it is not retried. Retried: connection failures and HTTP 408, 409, 429
 * and 5xx, or whatever `x-should-retry` says; never a response that was too large. The
 * wait is what `retry-after-ms` or `Retry-After` ask for, else 0.5 s doubling per retry up
 * to 8 s, less up to a quarter of jitter. The caller checks it against the deadline.
 */
export function retryDelayMs(error: unknown, retryIndex: number): number | undefined {
  if (findTooLarge(error) !== undefined) return undefined;
  if (error instanceof APIConnectionError) return backoffMs(retryIndex);
  if (!(error instanceof APIError) || error.status === undefined) return undefined;
  const told = error.headers?.get("x-should-retry");
  if (told === "false") return undefined;
  const status = error.status;
  if (told !== "true" && status !== 408 && status !== 409 && status !== 429 && status < 500) return undefined;
  return askedDelayMs(error.headers) ?? backoffMs(retryIndex);
}

function askedDelayMs(headers: Headers | undefined): number | undefined {
  const milliseconds = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(milliseconds)) return Math.max(0, milliseconds);
  const retryAfter = headers?.get("retry-after");
  if (retryAfter === null || retryAfter === undefined) return undefined;
  const seconds = Number.parseFloat(retryAfter);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(retryAfter);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

function backoffMs(retryIndex: number): number {
  return Math.min(500 * 2 ** retryIndex, 8000) * (1 - Math.random() * 0.25);
}

/** The rejection of an attempt whose signal aborted. */
export function cancelledError(endpoint: EndpointFacts, reason: unknown): OpenWorkerError {
  return new OpenWorkerError(OPENAI_PROVIDER_CODES.REQUEST_CANCELLED, `request to ${describeEndpoint(endpoint)} was cancelled before it completed`, {
    cause: reason,
    details: { origin: endpoint.origin, model: endpoint.model },
  });
}

/** The error for a completion the endpoint sent but that cannot be read. */
export function unreadableCompletionError(endpoint: EndpointFacts, problem: string): OpenWorkerError {
  return new OpenWorkerError(
    OPENAI_PROVIDER_CODES.REQUEST_FAILED,
    `${describeEndpoint(endpoint)} sent an unusable chat completion: ${problem}; check that the server speaks the OpenAI chat-completions format`,
    { details: { reason: "unreadable-completion", origin: endpoint.origin, model: endpoint.model, problem } },
  );
}

/** Replaces every occurrence of a secret with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length > 0) result = result.split(secret).join("[redacted]");
  }
  return result;
}

function describeEndpoint(endpoint: EndpointFacts): string {
  return `model endpoint ${endpoint.origin} (model "${endpoint.model}")`;
}

/** Server text fit for a message: redacted first, then cut, so no cut leaves part of a secret (E6). */
function safeText(text: string, secrets: readonly string[]): string {
  return truncate(redact(text, secrets));
}

function serverMessage(error: APIError): string {
  const body: unknown = error.error;
  if (typeof body === "object" && body !== null && typeof (body as { message?: unknown }).message === "string") {
    return (body as { message: string }).message;
  }
  if (typeof body === "string") return body;
  // A body that is not JSON (a proxy's "Bad Gateway" page) reaches us only in the client's message, after the status.
  const prefix = `${error.status} `;
  if (body === undefined && error.message.startsWith(prefix) && !error.message.endsWith("status code (no body)")) {
    return error.message.slice(prefix.length);
  }
  return "";
}

/**
 * The server's own error code (`context_length_exceeded`, `model_not_found`, …), when it
 * sent a short word: what a host branches on and an operator searches for. A number
 * (vLLM repeats the HTTP status there) or anything long or odd is left out.
 */
function serverErrorCode(error: APIError, secrets: readonly string[]): string | undefined {
  const code: unknown = error.code;
  if (typeof code !== "string" || !/^[A-Za-z0-9_.:-]{1,64}$/.test(code)) return undefined;
  return safeText(code, secrets) === code ? code : undefined;
}

function statusAdvice(status: number | undefined): string {
  if (status === 401 || status === 403) return "; check the API key (OPENAI_API_KEY or the apiKey option)";
  if (status === 404) return "; check baseURL (it usually ends in /v1) and the model name";
  if (status === 429) return "; the endpoint is rate limiting, try again later";
  return "";
}

function describeCause(error: Error): string {
  const cause: unknown = error.cause;
  if (!(cause instanceof Error)) return "";
  const code = (cause as { code?: unknown }).code;
  return typeof code === "string" ? code : cause.message;
}

function findTooLarge(error: unknown): ResponseTooLargeError | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    if (current instanceof ResponseTooLargeError) return current;
  }
  return undefined;
}

/**
 * True when a secret appears anywhere in the error: messages, bodies and response headers
 * along the cause chain (a server may echo `Authorization` in a header), and its printed
 * form. An error that cannot be printed counts as carrying one.
 */
function carriesSecret(error: unknown, secrets: readonly string[]): boolean {
  if (!secrets.some((secret) => secret.length > 0)) return false;
  const texts: string[] = [];
  try {
    texts.push(inspect(error, { depth: 8, maxArrayLength: Infinity, maxStringLength: Infinity, breakLength: Infinity }));
    for (let current: unknown = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
      texts.push(current.message);
      if (current instanceof APIError) {
        texts.push(safeJson(current.error));
        for (const [name, value] of current.headers ?? []) texts.push(`${name}: ${value}`);
      }
    }
  } catch {
    return true;
  }
  return secrets.some((secret) => secret.length > 0 && texts.some((text) => text.includes(secret)));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

function truncate(text: string): string {
  return text.length <= MAX_SERVER_TEXT ? text : `${text.slice(0, MAX_SERVER_TEXT)}…`;
}
