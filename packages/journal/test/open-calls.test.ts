import { describe, expect, it } from "vitest";
import type { CallState } from "../src/live-state.js";
import { OpenCalls } from "../src/open-calls.js";

const call = (callId: string): CallState => ({ callId, idText: callId, sessionId: "s1", phase: "requested" });

describe("a session's open calls (A3 call state machine)", () => {
  it("A3 finds, removes and lists open calls in request order, with few and with very many in flight", () => {
    for (const count of [3, 40]) {
      const open = new OpenCalls();
      const model = new Map<string, CallState>();
      for (let index = 0; index < count; index += 1) {
        const state = call(`c${index}`);
        open.add(state);
        model.set(state.callId, state);
      }
      // Remove every third, the first and the last, as calls end out of order.
      for (const callId of [...model.keys()].filter((_, index) => index % 3 === 1 || index === 0 || index === count - 1)) {
        open.delete(callId);
        model.delete(callId);
      }
      open.delete("never-added");
      expect(open.size).toBe(model.size);
      expect(Array.from(open.values(), (state) => state.callId)).toEqual([...model.keys()]);
      for (const [callId, state] of model) expect(open.get(callId)).toBe(state);
      expect(open.has("c0")).toBe(false);
      expect(open.get("c0")).toBeUndefined();
      const later = call("later");
      open.add(later);
      expect(open.get("later")).toBe(later);
      expect([...open.values()].at(-1)).toBe(later);
    }
  });

  it("A3 a session that had very many calls in flight lists, finds and removes them as before once they have all ended", () => {
    const open = new OpenCalls();
    for (let index = 0; index < 100; index += 1) open.add(call(`c${index}`));
    for (let index = 99; index >= 0; index -= 1) open.delete(`c${index}`);
    expect(open.size).toBe(0);
    expect([...open.values()]).toEqual([]);
    for (const callId of ["a", "b", "c"]) open.add(call(callId));
    open.delete("b");
    expect(Array.from(open.values(), (state) => state.callId)).toEqual(["a", "c"]);
    expect(open.has("b")).toBe(false);
    expect(open.get("c")?.callId).toBe("c");
  });
});
