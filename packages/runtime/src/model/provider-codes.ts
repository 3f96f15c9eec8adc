/**
 * Stable error codes a model provider rejects `complete` with, the same for every
 * provider package (`@openworker/model-openai`, `@openworker/model-ai-sdk`), so a host
 * branches on them once. The runtime reports any of them as the turn's `MODEL_FAILED`.
 *
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error, MODEL_PROVIDER_CODES.REQUEST_CANCELLED)) return;
 * ```
 */
export const MODEL_PROVIDER_CODES = Object.freeze({
  /** The options given to the provider are unusable. */
  CONFIG_INVALID: "MODEL_PROVIDER_CONFIG_INVALID",
  /** The endpoint failed, answered with an error status, or sent an unreadable or incomplete answer. */
  REQUEST_FAILED: "MODEL_REQUEST_FAILED",
  /** The attempt's signal aborted before the answer arrived. */
  REQUEST_CANCELLED: "MODEL_REQUEST_CANCELLED",
  /** A tool alias is longer than the provider accepts; it is never sent. */
  ALIAS_TOO_LONG: "ALIAS_TOO_LONG_FOR_PROVIDER",
  /** A turn selects more tools than the provider accepts in one request; nothing is sent. */
  TOO_MANY_TOOLS: "MODEL_TOO_MANY_TOOLS",
} as const);
