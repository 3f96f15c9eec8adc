import type { JsonValue } from "@openworker/tools-sdk";
import type { ModelCatalogRow, ModelProvider, ModelReadiness, ModelRequest, ModelResponse } from "../model/types.js";

/** One scripted model answer: text and/or tool calls (by alias), or a function of the request. */
export type ScriptStep =
  | { readonly text?: string; readonly toolCalls?: readonly { readonly name: string; readonly arguments: string | JsonValue }[] }
  | ((request: ModelRequest) => ScriptStep | Promise<ScriptStep>);

/**
 * A model provider that answers from a script, for tests and demos: each attempt takes
 * the next step. It records every request it saw (`requests`, unless `recordRequests: false`), honours cancellation,
 * and answers "(script finished)" once the script runs out.
 *
 * @example
 * ```ts
 * const model = new ScriptedProvider([
 *   { toolCalls: [{ name: "example__web_search", arguments: { query: "mcp" } }] },
 *   { text: "Done." },
 * ]);
 * ```
 */
export class ScriptedProvider implements ModelProvider {
  readonly id = "scripted";
  readonly defaultModel = "scripted-1";
  // Optional, not `number | undefined`: under `exactOptionalPropertyTypes` a declared
  // `undefined` does not implement `ModelProvider`'s optional property.
  readonly maxToolNameLength?: number;
  readonly requests: ModelRequest[] = [];
  readonly #steps: ScriptStep[];
  #calls = 0;

  readonly #record: boolean;

  /** `recordRequests: false` keeps `requests` empty: a long demo would otherwise hold every request, images included. */
  constructor(steps: readonly ScriptStep[], options: { maxToolNameLength?: number; recordRequests?: boolean } = {}) {
    this.#steps = [...steps];
    this.#record = options.recordRequests ?? true;
    if (options.maxToolNameLength !== undefined) this.maxToolNameLength = options.maxToolNameLength;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    if (this.#record) this.requests.push(request);
    if (request.signal.aborted) throw request.signal.reason ?? new Error("aborted");
    let step: ScriptStep | undefined = this.#steps.shift();
    while (typeof step === "function") step = await step(request);
    if (!step) return { text: "(script finished)", toolCalls: [] };
    const toolCalls = (step.toolCalls ?? []).map((call) => ({ id: `call_${++this.#calls}`, name: call.name, arguments: call.arguments }));
    return { text: step.text ?? "", toolCalls };
  }

  listModels(): readonly ModelCatalogRow[] {
    return [{ provider: this.id, model: this.defaultModel }];
  }

  readModelReadiness(model: string): ModelReadiness | undefined {
    return model === this.defaultModel ? { accountType: "scripted" } : undefined;
  }
}
