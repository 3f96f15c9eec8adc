import type { JsonSchema, JsonValue } from "@openworker/tools-sdk";

/** A tool as the model sees it: its alias (N2), description and input schema. */
export interface ModelToolDefinition {
  /** The model alias (`example__web_search`), never the qualified name. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/** A tool call the model asked for. */
export interface ModelToolCall {
  /** The provider's id for the call, echoed back with its result. */
  readonly id: string;
  /** The alias the model used. */
  readonly name: string;
  /** The arguments as the model sent them: JSON text (most providers) or parsed JSON. */
  readonly arguments: string | JsonValue;
}

/** An image delivered to the model beside a tool result (T4). */
export interface ModelImage {
  readonly mimeType: string;
  readonly data: Uint8Array;
  readonly description?: string;
}

/** The conversation as the runtime keeps it, provider-neutral. */
export type ModelMessage =
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls: readonly ModelToolCall[] }
  | {
      readonly role: "tool";
      readonly toolCallId: string;
      /** The alias of the tool that answered. */
      readonly name: string;
      /** The text the model sees: the result's derived text, or the failure in words. */
      readonly content: string;
      readonly isError: boolean;
      /** Images for this attempt only; consent already rechecked (T4). */
      readonly images: readonly ModelImage[];
    };

/** One provider attempt. */
export interface ModelRequest {
  readonly model: string;
  /** The coworker's system instructions (manifest body and skills). */
  readonly instructions: string;
  /**
   * Live facts from the selected tools' `modelContext` hooks (L1), keyed by alias:
   * transient instruction context, never authorization (L2). Providers put them in the
   * system prompt of this attempt only.
   */
  readonly facts: Readonly<Record<string, JsonValue>>;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelToolDefinition[];
  readonly signal: AbortSignal;
}

/** Tokens one attempt used, as the model's endpoint counted them. */
export interface ModelUsage {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
}

/** What the model answered in one attempt. */
export interface ModelResponse {
  /** Text for the user (may be empty when the model only calls tools). */
  readonly text: string;
  readonly toolCalls: readonly ModelToolCall[];
  /** Tokens the attempt used, when the endpoint said. */
  readonly usage?: ModelUsage;
}

/** A row of the model catalog (I1). */
export interface ModelCatalogRow {
  readonly provider: string;
  readonly model: string;
}

/**
 * A readiness observation (I1, seed 004): synchronous, no I/O, and never execution
 * authorization. `undefined` means no current observation.
 */
export interface ModelReadiness {
  readonly accountType: string;
}

/** A model endpoint the runtime can drive. */
export interface ModelProvider {
  /** Stable id: `"scripted"`, `"openai"`, `"anthropic"`, … */
  readonly id: string;
  /** The model used when a session does not name one. */
  readonly defaultModel: string;
  /** Longest tool name the provider accepts (OpenAI: 64). Aliases must fit it. */
  readonly maxToolNameLength?: number;
  /** Runs one attempt. Must honour `request.signal`. */
  complete(request: ModelRequest): Promise<ModelResponse>;
  /** The models this provider offers (I1). No I/O beyond what the provider already knows. */
  listModels(): readonly ModelCatalogRow[];
  /** Current readiness of one model (I1): synchronous, no I/O. */
  readModelReadiness?(model: string): ModelReadiness | undefined;
  /**
   * The credentials this provider was handed (an API key, header values): the runtime
   * redacts them from everything it writes, as it does the MCP providers' (E6). Read once,
   * when the runtime opens.
   */
  secrets?(): readonly string[];
}
