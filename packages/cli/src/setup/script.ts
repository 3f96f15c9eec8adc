import type { JsonValue } from "@openworker/tools-sdk";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { CLI_ERROR_CODES } from "../cli/errors.js";
import { isObject, readJsonFile } from "./files.js";

/** One step of a `--script` file: what the scripted model answers at one attempt. */
export interface ScriptFileStep {
  readonly text?: string;
  /** Tool calls by model alias (`example__web_search`), with JSON arguments. */
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: JsonValue }[];
}

/**
 * Reads a scripted-model file: a JSON array of steps `{ "text"?: string, "toolCalls"?:
 * [{ "name": alias, "arguments": {…} }] }`. Each model attempt takes the next step;
 * after the last one the model answers "(script finished)".
 *
 * @example
 * ```ts
 * const steps = await readScriptFile("demo/script.json");
 * ```
 */
export async function readScriptFile(file: string): Promise<ScriptFileStep[]> {
  return parseScript(await readJsonFile(file, "CLI_SCRIPT"), file);
}

/**
 * Checks a parsed script (see {@link readScriptFile}); every problem names the step.
 *
 * @example
 * ```ts
 * parseScript([{ text: "Hello." }], "inline"); // [{ text: "Hello." }]
 * ```
 */
export function parseScript(value: unknown, file: string): ScriptFileStep[] {
  const fail = (problem: string) => new OpenWorkerError(CLI_ERROR_CODES.SCRIPT_INVALID, `${file}: ${problem}`, { details: { file } });
  if (!Array.isArray(value)) throw fail(`must be a JSON array of steps, got ${value === null ? "null" : typeof value}`);
  return value.map((step: unknown, index) => {
    const at = `step ${index}`;
    if (!isObject(step)) throw fail(`${at} must be an object {"text"?, "toolCalls"?}`);
    const unknown = Object.keys(step).filter((key) => key !== "text" && key !== "toolCalls");
    if (unknown.length > 0) throw fail(`${at} has unknown field ${JSON.stringify(unknown[0])} (allowed: text, toolCalls)`);
    if (step.text !== undefined && typeof step.text !== "string") throw fail(`${at}: "text" must be a string`);
    if (step.toolCalls === undefined) return step.text !== undefined ? { text: step.text as string } : {};
    if (!Array.isArray(step.toolCalls)) throw fail(`${at}: "toolCalls" must be an array`);
    const toolCalls = step.toolCalls.map((call: unknown, callIndex) => {
      const where = `${at}, toolCalls[${callIndex}]`;
      if (!isObject(call) || typeof call.name !== "string" || call.name === "") {
        throw fail(`${where} needs a "name" (the tool's model alias, e.g. "example__web_search")`);
      }
      const extra = Object.keys(call).filter((key) => key !== "name" && key !== "arguments");
      if (extra.length > 0) throw fail(`${where} has unknown field ${JSON.stringify(extra[0])} (allowed: name, arguments)`);
      return { name: call.name, arguments: (call.arguments ?? {}) as JsonValue };
    });
    return { ...(step.text !== undefined ? { text: step.text as string } : {}), toolCalls };
  });
}
