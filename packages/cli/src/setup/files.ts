import { jsonSyntaxProblem, readConfigFile } from "@openworker/registry";
import { OpenWorkerError } from "@openworker/tools-sdk";

/**
 * Reads a small JSON file named on the command line (bounded like every config file:
 * 1 MiB, UTF-8). File problems get `<prefix>_FILE_*` codes, bad JSON `<prefix>_INVALID`.
 */
export async function readJsonFile(file: string, prefix: string): Promise<unknown> {
  const { text } = await readConfigFile(file, { codePrefix: `${prefix}_FILE` });
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new OpenWorkerError(`${prefix}_INVALID`, `${file}: is not JSON, ${jsonSyntaxProblem(text, cause)}`, { cause, details: { file } });
  }
}

/** True for a plain JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
