import type { JsonValue } from "@openworker/tools-sdk";
import type { ModelCatalogRow, ModelProvider, ModelReadiness, ModelRequest, ModelResponse } from "../model/types.js";

/** One scripted model answer: text and/or tool calls (by alias), or a function of the request. */
export type ScriptStep =
  | { readonly text?: string; readonly toolCalls?: readonly { readonly name: string; readonly arguments: string | JsonValue }[] }
  | ((request: ModelRequest) => ScriptStep | Promise<ScriptStep>);

/**
 * A model provider that answers from a script, for tests and demos: each attempt takes
 * the next step. It records every request it saw (`requests`, unless `recordRequests: false`), honours cancellation,
 * and answers "(script finished)" once the script runs out, or, with `whenExhausted: "fail"`
 * (for tests: a turn that needed more steps than were written must not pass for answered),
 * fails that attempt, which ends the turn `model_error`. `remaining` counts the steps left.
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
  #answered = 0;

  readonly #record: boolean;
  readonly #failWhenExhausted: boolean;

  /**
   * `recordRequests: false` keeps `requests` empty: a long demo would otherwise hold every
   * request, images included. `whenExhausted` says what an attempt past the last step gets:
   * `"answer"` (the default) the text "(script finished)", `"fail"` an error.
   */
  constructor(steps: readonly ScriptStep[], options: { maxToolNameLength?: number; recordRequests?: boolean; whenExhausted?: "answer" | "fail" } = {}) {
    this.#steps = [...steps];
    this.#record = options.recordRequests ?? true;
    if (options.whenExhausted !== undefined && options.whenExhausted !== "answer" && options.whenExhausted !== "fail") {
      throw new TypeError(`ScriptedProvider: whenExhausted must be "answer" or "fail", got ${JSON.stringify(options.whenExhausted)}`);
    }
    this.#failWhenExhausted = options.whenExhausted === "fail";
    if (options.maxToolNameLength !== undefined) this.maxToolNameLength = options.maxToolNameLength;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    if (this.#record) this.requests.push(request);
    if (request.signal.aborted) throw request.signal.reason ?? new Error("aborted");
    let step: ScriptStep | undefined = this.#steps.shift();
    while (typeof step === "function") step = await step(request);
    if (!step) {
      if (this.#failWhenExhausted)
        throw new Error(`the script has no step left for this attempt (it had ${this.#answered} step(s)); add steps or expect fewer attempts`);
      return { text: "(script finished)", toolCalls: [] };
    }
    this.#answered += 1;
    const toolCalls = (step.toolCalls ?? []).map((call) => ({ id: `call_${++this.#calls}`, name: call.name, arguments: call.arguments }));
    return { text: step.text ?? "", toolCalls };
  }

  /** The steps not yet taken: a test checks it is 0 to know the turn went as scripted. */
  get remaining(): number {
    return this.#steps.length;
  }

  listModels(): readonly ModelCatalogRow[] {
    return [{ provider: this.id, model: this.defaultModel }];
  }

  readModelReadiness(model: string): ModelReadiness | undefined {
    return model === this.defaultModel ? { accountType: "scripted" } : undefined;
  }
}
