import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { onAbort, untilAborted } from "../src/execution/index.js";

describe("onAbort (one listener per signal for every call waiting on it)", () => {
  it("T7 calls waiting on one signal share one EventTarget listener; a removed call is not told, the others get the reason", () => {
    const controller = new AbortController();
    const heard: string[] = [];
    const removers = Array.from({ length: 40 }, (_, index) => onAbort(controller.signal, (reason) => heard.push(`${index}:${String(reason)}`)));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    // Calls settle in any order; each removal is O(1) (swap with the last).
    for (const index of [0, 39, 17, 18, 5]) removers[index]!();
    removers[17]!(); // twice is harmless
    controller.abort("stop");
    expect(heard).toHaveLength(35);
    expect(heard.map((entry) => Number(entry.split(":")[0])).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 40 }, (_, index) => index).filter((index) => ![0, 39, 17, 18, 5].includes(index)),
    );
    expect(heard.every((entry) => entry.endsWith(":stop"))).toBe(true);
    removers[1]!(); // after the abort: harmless
  });

  it("a listener that throws does not keep the others from hearing the abort", async () => {
    const controller = new AbortController();
    const heard: number[] = [];
    const thrown: unknown[] = [];
    const onError = (error: unknown) => thrown.push(error);
    process.on("uncaughtException", onError);
    try {
      onAbort(controller.signal, () => heard.push(1));
      onAbort(controller.signal, () => {
        throw new Error("listener bug");
      });
      onAbort(controller.signal, () => heard.push(3));
      controller.abort();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("uncaughtException", onError);
    }
    expect(heard).toEqual([1, 3]);
    expect(thrown).toEqual([expect.objectContaining({ message: "listener bug" })]);
  });
});

describe("untilAborted", () => {
  it("E4 settles with the work, or rejects at once with the signal's reason while the work goes on unhandled-safe", async () => {
    expect(await untilAborted(Promise.resolve(7), undefined)).toBe(7);
    const controller = new AbortController();
    expect(await untilAborted(Promise.resolve("done"), controller.signal)).toBe("done");
    let fail!: (error: Error) => void;
    const slow = new Promise<never>((_, reject) => (fail = reject));
    const waiting = untilAborted(slow, controller.signal);
    controller.abort(new Error("caller left"));
    await expect(waiting).rejects.toThrow("caller left");
    // The abandoned work rejecting later is handled: no unhandled rejection reaches the process.
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", record);
    fail(new Error("late failure"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    process.off("unhandledRejection", record);
    expect(unhandled).toEqual([]);
    await expect(untilAborted(Promise.resolve(1), AbortSignal.abort(new Error("already")))).rejects.toThrow("already");
  });
});
