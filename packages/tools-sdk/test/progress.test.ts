import { describe, expect, it } from "vitest";
import { createBoundedProgress } from "../src/execution/index.js";
import { LIMITS, type ProgressEvent, type Tool } from "../src/index.js";
import { runTool } from "../src/testing/index.js";

// What a tool reports is refused, never coerced: an event that is not an object, or data a
// journal would record as something else, is dropped and counted like any event past a
// bound (E2), and the call then ends as a limit breach (E4).

function reporter(): { report: (event: unknown) => boolean; accepted: ProgressEvent[]; stats: ReturnType<typeof createBoundedProgress>["stats"] } {
  const accepted: ProgressEvent[] = [];
  const progress = createBoundedProgress((event) => accepted.push(event));
  return { report: (event) => progress.reporter.report(event as ProgressEvent), accepted, stats: progress.stats };
}

describe("progress events are refused, not coerced (E2)", () => {
  it.each([
    ["a string", "just a string", "progress event is a string"],
    ["a number", 42, "progress event is a number"],
    ["an array", [{ message: "a" }], "progress event is an array"],
    ["null", null, "progress event is null"],
    [
      "a class instance",
      new (class Status {
        message = "half way";
      })(),
      "progress event is a class instance",
    ],
  ])("E2 an event that is %s is dropped and counted, not accepted as {}", (_label, event, reason) => {
    const progress = reporter();
    expect(progress.report(event)).toBe(false);
    expect(progress.accepted).toEqual([]);
    expect(progress.stats).toMatchObject({ accepted: 0, dropped: 1, jsonBytes: 0 });
    expect(progress.stats.breaches).toEqual([
      { limit: "progressJsonBytes", actual: 0, max: LIMITS.progressJsonBytes, message: expect.stringContaining(reason) },
    ]);
  });

  it.each([
    ["a Map", { data: new Map([["a", 1]]) }, "progress data is not JSON: is a Map, not a plain object"],
    ["a Set inside", { data: { seen: new Set([1]) } }, "progress data is not JSON: at /seen is a Set, not a plain object"],
    ["a Date inside", { data: { when: new Date(0) } }, "progress data is not JSON: at /when is a Date, not a plain object"],
    ["a function inside", { data: { next: () => 1 } }, "progress data is not JSON: at /next is a function"],
    ["NaN inside", { data: { ratio: Number.NaN } }, "progress data is not JSON: at /ratio is NaN"],
    ["a BigInt inside", { data: { count: 1n } }, "progress data is not JSON: at /count is a bigint"],
    ["undefined inside", { data: { list: [1, undefined] } }, "progress data is not JSON: at /list/1 is undefined"],
    ["a NaN progress", { message: "m", progress: Number.NaN }, "progress event's progress is NaN, not a finite number"],
    ["a string total", { message: "m", total: "10" }, "progress event's total is a string, not a finite number"],
  ])("E2 an event with %s is dropped and counted, as a result with it would be refused", (_label, event, reason) => {
    const progress = reporter();
    expect(progress.report(event)).toBe(false);
    expect(progress.accepted).toEqual([]);
    expect(progress.stats).toMatchObject({ accepted: 0, dropped: 1, jsonBytes: 0 });
    expect(progress.stats.breaches[0]?.message).toBe(reason);
  });

  it("E2 plain events still pass, as a fresh copy; the host never gets the tool's objects", () => {
    const progress = reporter();
    const data = { items: [{ id: 1, label: null }], done: false };
    expect(progress.report({ message: "half way", progress: 1, total: 2, data })).toBe(true);
    expect(progress.report(Object.assign(Object.create(null) as object, { message: "bare" }))).toBe(true);
    expect(progress.accepted).toEqual([{ message: "half way", progress: 1, total: 2, data }, { message: "bare" }]);
    expect(progress.accepted[0]?.data).not.toBe(data);
    expect(progress.stats).toMatchObject({ accepted: 2, dropped: 0, breaches: [] });
  });

  it("E2 E4 through runTool: report returns false for a refused event, and the call ends limit_exceeded with its result kept", async () => {
    const answers: boolean[] = [];
    const tool: Tool = {
      descriptor: () => ({ name: "progress.coerced", description: "Reports badly.", version: "1", inputSchema: { type: "object" } }),
      call: async (context) => {
        answers.push(context.progress.report("just a string" as never));
        answers.push(context.progress.report({ message: "m", data: new Map([["a", 1]]) }));
        answers.push(context.progress.report({ message: "fine" }));
        return { json: "done" };
      },
    };
    const result = await runTool(tool, {});
    expect(answers).toEqual([false, false, true]);
    expect(result.progressEvents).toEqual([{ message: "fine" }]);
    expect(result).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "progressJsonBytes" }, output: { json: "done" } });
    expect(result.progress).toMatchObject({ accepted: 1, dropped: 2 });
  });
});
