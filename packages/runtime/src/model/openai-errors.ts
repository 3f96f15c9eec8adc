import { OpenWorkerError } from "@openworker/tools-sdk";
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";

/**
 * Stable error codes of the OpenAI-compatible provider.
 *
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error, OPENAI_PROVIDER_CODES.REQUEST_CANCELLED)) return;
 * ```
 */
export const OPENAI_PROVIDER_CODES = Object.freeze({
  /** The options given to `new OpenAICompatibleProvider(…)` are unusable. */
  CONFIG_INVALID: "MODEL_PROVIDER_CONFIG_INVALID",
  /** The endpoint failed, answered with an error status, or sent an unreadable completion. */
  REQUEST_FAILED: "MODEL_REQUEST_FAILED",
  /** The attempt's signal aborted before the completion arrived. */
  REQUEST_CANCELLED: "MODEL_REQUEST_CANCELLED",
  /** A tool alias is longer than the provider accepts; it is never sent. */
  ALIAS_TOO_LONG: "ALIAS_TOO_LONG_FOR_PROVIDER",
} as const);

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
 * redacted (servers echo keys in 401 bodies), and the client's own error is kept as
 * `cause` only when it carries none of the secrets.
 */
export function toProviderError(error: unknown, signal: AbortSignal, endpoint: EndpointFacts): OpenWorkerError {
  if (OpenWorkerError.isInstance(error)) return error;
  if (signal.aborted || error instanceof APIUserAbortError) return cancelledError(endpoint, signal.reason);

  const where = `model endpoint ${endpoint.origin} (model "${endpoint.model}")`;
  const cause = carriesSecret(error, endpoint.secrets) ? undefined : error;
  const failed = (reason: string, message: string, details: Record<string, unknown> = {}): OpenWorkerError =>
    new OpenWorkerError(OPENAI_PROVIDER_CODES.REQUEST_FAILED, message, {
      cause,
      details: { reason, origin: endpoint.origin, model: endpoint.model, ...details },
    });

  if (error instanceof APIConnectionTimeoutError) {
    return failed("timeout", `${where} did not answer in time; check that the server is up, or raise timeoutMs`);
  }
  if (error instanceof APIConnectionError) {
    const detail = redact(describeCause(error), endpoint.secrets);
    return failed("connection", `${where} could not be reached${detail ? ` (${detail})` : ""}; check baseURL and that the server is running`);
  }
  if (error instanceof APIError) {
    const status = error.status ?? "unknown";
    const serverText = redact(serverMessage(error), endpoint.secrets);
    return failed(
      "http",
      `${where} answered HTTP ${status}${serverText ? `: ${serverText}` : ""}${statusAdvice(error.status)}`,
      { status: error.status, requestId: error.requestID ?? undefined },
    );
  }
  const text = redact(error instanceof Error ? error.message : String(error), endpoint.secrets);
  return failed("client", `${where} request failed: ${truncate(text)}`);
}

/** The rejection of an attempt whose signal aborted. */
export function cancelledError(endpoint: EndpointFacts, reason: unknown): OpenWorkerError {
  return new OpenWorkerError(
    OPENAI_PROVIDER_CODES.REQUEST_CANCELLED,
    `request to model endpoint ${endpoint.origin} (model "${endpoint.model}") was cancelled before it completed`,
    { cause: reason, details: { origin: endpoint.origin, model: endpoint.model } },
  );
}

/** The error for a completion the endpoint sent but that cannot be read. */
export function unreadableCompletionError(endpoint: EndpointFacts, problem: string): OpenWorkerError {
  return new OpenWorkerError(
    OPENAI_PROVIDER_CODES.REQUEST_FAILED,
    `model endpoint ${endpoint.origin} (model "${endpoint.model}") sent an unusable chat completion: ${problem}; check that the server speaks the OpenAI chat-completions format`,
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

function serverMessage(error: APIError): string {
  const body: unknown = error.error;
  if (typeof body === "object" && body !== null && typeof (body as { message?: unknown }).message === "string") {
    return truncate((body as { message: string }).message);
  }
  if (typeof body === "string") return truncate(body);
  return "";
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
  return typeof code === "string" ? code : truncate(cause.message);
}

function carriesSecret(error: unknown, secrets: readonly string[]): boolean {
  const texts: string[] = [];
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    texts.push(current.message);
    if (current instanceof APIError) texts.push(safeJson(current.error));
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
