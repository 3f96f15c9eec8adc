import { OpenWorkerError } from "@openworker/tools-sdk";

/**
 * Every problem a failed `loadBundle` or `parseToolsJson` found: the error's
 * `details.problems` (each bad entry of tools.json, the manifest's problem first when
 * both files failed), or the error itself when it carries none (a file missing, a shape
 * error). Typed, so a host need not cast `details`.
 *
 * @example
 * ```ts
 * try {
 *   await loadBundle("coworker");
 * } catch (error) {
 *   if (!OpenWorkerError.isInstance(error)) throw error;
 *   for (const problem of problemsOf(error)) console.error(`${problem.code}: ${problem.message}`);
 * }
 * ```
 */
export function problemsOf(error: OpenWorkerError): readonly OpenWorkerError[] {
  const problems = error.details.problems;
  if (Array.isArray(problems) && problems.length > 0 && problems.every((problem) => OpenWorkerError.isInstance(problem)))
    return problems as readonly OpenWorkerError[];
  return [error];
}
