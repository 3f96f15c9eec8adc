import type { CallReport, TurnResult } from "@openworker/runtime";

/** A call report as JSON: images and audio stay in the process (T4), counted (audio only when there is some). */
export function callJson(report: CallReport): Omit<CallReport, "images" | "audio"> & { images: number; audio?: number } {
  const { images, audio, ...rest } = report;
  return { ...rest, images: images.length, ...(audio === undefined ? {} : { audio: audio.length }) };
}

/** A turn's result as JSON (`turn.run`'s answer, `run --message --json`). */
export function turnJson(result: TurnResult): Omit<TurnResult, "calls"> & { calls: ReturnType<typeof callJson>[] } {
  return { ...result, calls: result.calls.map(callJson) };
}
