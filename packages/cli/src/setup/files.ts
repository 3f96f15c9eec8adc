import { findDuplicateJsonKey, jsonSyntaxProblem, readConfigFile } from "@openworker/registry/internal";
import { OpenWorkerError } from "@openworker/tools-sdk";

/**
 * Reads a small JSON file named on the command line (bounded like every config file:
 * 1 MiB, UTF-8). File problems get `<prefix>_FILE_*` codes, bad JSON `<prefix>_INVALID`.
 * A key given twice in one object is `<prefix>_INVALID` too: `JSON.parse` keeps the last,
 * so a policy's `"external": "deny"` a reviewer reads could be undone by a later
 * `"external": "allow"` (the same rule as tools.json and servers.json).
 */
export async function readJsonFile(file: string, prefix: string): Promise<unknown> {
  const { text } = await readConfigFile(file, { codePrefix: `${prefix}_FILE` });
  let document: unknown;
  try {
    document = JSON.parse(text) as unknown;
  } catch (cause) {
    throw new OpenWorkerError(`${prefix}_INVALID`, `${file}: is not JSON, ${jsonSyntaxProblem(text, cause)}`, { cause, details: { file } });
  }
  const duplicate = findDuplicateJsonKey(text);
  if (duplicate) {
    const where = duplicate.path === "" ? "" : ` in "${duplicate.path}"`;
    throw new OpenWorkerError(`${prefix}_INVALID`, `${file}: key ${JSON.stringify(duplicate.key)} appears twice${where}; give each once`, {
      details: { file, field: duplicate.path, key: duplicate.key },
    });
  }
  return document;
}

/** True for a plain JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
