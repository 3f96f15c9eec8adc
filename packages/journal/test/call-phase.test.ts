import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CallPhase, type CallStep, CallTally, isOpen, nextPhase } from "../src/records/call-phase.js";

const steps: readonly CallStep[] = ["call_requested", "approval_decided", "call_started", "call_progress", "call_finished"];

describe("the call-phase reducer (A3)", () => {
  it("A3 allows exactly requested → decided → started → progress… → one terminal record, and a denial ends the call", () => {
    expect(nextPhase(undefined, "call_requested")).toBe("requested");
    expect(nextPhase("requested", "approval_decided", true)).toBe("denied");
    expect(nextPhase("requested", "approval_decided", false)).toBe("approved");
    expect(nextPhase("approved", "call_started")).toBe("started");
    expect(nextPhase("started", "call_progress")).toBe("started");
    for (const from of ["requested", "approved", "started"] as const) expect(nextPhase(from, "call_finished")).toBe("finished");
    for (const step of steps) {
      expect(nextPhase("finished", step)).toBeUndefined();
      expect(nextPhase("denied", step)).toBeUndefined();
    }
    expect(nextPhase("requested", "call_started")).toBeUndefined();
    expect(nextPhase("approved", "call_progress")).toBeUndefined();
    expect(nextPhase("started", "approval_decided")).toBeUndefined();
  });

  it("A3 a tally of any record sequence keeps open exactly the calls the reducer leaves open", () => {
    const record = fc.record({ callId: fc.constantFrom("a", "b", "c"), kind: fc.constantFrom(...steps), denied: fc.boolean() });
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), (records) => {
        const tally = new CallTally();
        const model = new Map<string, CallPhase>();
        let requested = 0;
        for (const { callId, kind, denied } of records) {
          tally.add({ callId, kind, decision: denied ? "denied" : "approved", by: "policy" });
          const next = nextPhase(model.get(callId), kind, denied);
          if (next === undefined) continue;
          if (kind === "call_requested") requested += 1;
          model.set(callId, next);
        }
        const open = [...model].filter(([, phase]) => isOpen(phase)).map(([callId, phase]) => `${callId}:${phase}`);
        expect([...tally.open].map(([callId, [phase]]) => `${callId}:${phase}`).sort()).toEqual(open.sort());
        expect(tally.requested).toBe(requested);
      }),
    );
  });
});
