import type { CallReport, TurnResult } from "@openworker/runtime";

/** A call report as JSON: images stay in the process (T4: they go only to the model), counted. */
export function callJson(report: CallReport): Omit<CallReport, "images"> & { images: number } {
  const { images, ...rest } = report;
  return { ...rest, images: images.length };
}

/** A turn's result as JSON (`turn.run`'s answer, `run --message --json`). */
export function turnJson(result: TurnResult): Omit<TurnResult, "calls"> & { calls: ReturnType<typeof callJson>[] } {
  return { ...result, calls: result.calls.map(callJson) };
}
