import { type JsonValue } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import { ScriptedProvider } from "../src/testing/index.js";
import { runtimesEach } from "./session-helpers.js";
import { nativeTool, writeBundle } from "./support/harness.js";

const { space, open } = runtimesEach();

describe("sessions", () => {
  it("L1 facts come from selected tools only, capped per tool and in total; a throwing or oversized hook contributes nothing", async () => {
    const facts = (value: JsonValue | (() => never)) => (typeof value === "function" ? value : () => value);
    const tools = [
      nativeTool("test.small", async () => ({ json: null }), { modelContext: facts({ battery: 80 }) }),
      nativeTool("test.big", async () => ({ json: null }), { modelContext: facts("x".repeat(5000)) }),
      nativeTool("test.throws", async () => ({ json: null }), {
        modelContext: facts(() => {
          throw new Error("broken hook");
        }),
      }),
      ...[1, 2, 3, 4, 5].map((index) => nativeTool(`test.fill${index}`, async () => ({ json: null }), { modelContext: facts("y".repeat(3900)) })),
      nativeTool("test.unselected", async () => ({ json: null }), { modelContext: facts({ secret: "never shown" }) }),
    ];
    const model = new ScriptedProvider([{ text: "hi" }]);
    // Caps are under test here, not speed: a generous budget keeps a GC pause on a busy
    // machine from making a constant hook "slow" (the next test covers slowness).
    const runtime = await open(space.dir, tools, { models: [model], modelContextBudgetMs: 1000 });
    const selected = tools.filter((tool) => tool.descriptor().name !== "test.unselected").map((tool) => tool.descriptor().name);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, selected) });
    const diagnostics: string[] = [];
    session.subscribe((event) => event.type === "diagnostic" && diagnostics.push(event.message));
    await session.runTurn("hello");
    const seen = model.requests[0]!.facts;
    expect(Object.keys(seen)).toEqual(["test__small", "test__fill1", "test__fill2", "test__fill3", "test__fill4"]);
    expect(JSON.stringify(seen).length).toBeLessThanOrEqual(16 * 1024);
    expect(diagnostics.join("\n")).toMatch(/test__big: .*limit is 4096/);
    expect(diagnostics.join("\n")).toMatch(/test__throws: modelContext threw: broken hook/);
    expect(diagnostics.join("\n")).toMatch(/test__fill5: .*total limit/);
  });

  /** A hook busy for `slowMs` on the calls `isSlow` picks (1-based), quick on the others; counts its calls. */
  const hookedTool = (slowMs: number, isSlow: (call: number) => boolean) => {
    const counter = { calls: 0 };
    const tool = nativeTool("test.slow", async () => ({ json: null }), {
      modelContext: () => {
        counter.calls++;
        if (isSlow(counter.calls)) {
          const until = performance.now() + slowMs;
          while (performance.now() < until) {
            // busy: a hook doing I/O-like work
          }
        }
        return { fresh: counter.calls };
      },
    });
    return { tool, counter };
  };
  // The budget is generous beside the quick calls (nothing) and far below the slow ones:
  // a pause of the busy machine must not make a quick call look slow.
  const budget = { modelContextBudgetMs: 100 };
  const slowMs = 250;

  it("L1 a hook slow once contributes nothing for the rest of that turn only; the next turn calls it again", async () => {
    const { tool, counter } = hookedTool(slowMs, (call) => call === 1);
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__slow", arguments: "{}" }] }, { text: "a" }, { text: "b" }]);
    const runtime = await open(space.dir, [tool], { models: [model], ...budget });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.slow"]), policy: { mode: "bypass" } });
    const diagnostics: string[] = [];
    session.subscribe((event) => event.type === "diagnostic" && diagnostics.push(event.message));
    await session.runTurn("one");
    await session.runTurn("two");
    // Turn one: slow on attempt 1, skipped on attempt 2. Turn two: called again, on time.
    expect(model.requests.map((request) => request.facts)).toEqual([{}, {}, { test__slow: { fresh: 2 } }]);
    expect(counter.calls).toBe(2);
    expect(diagnostics[0]).toMatch(/test__slow: modelContext took \d+\.\d ms \(budget 100 ms\)/);
    expect(diagnostics[1]).toBe("test__slow: skipped for this turn: an earlier modelContext call in it was too slow");
  });

  it("L1 a hook slow in three turns in a row is not called again in the session", async () => {
    const { tool, counter } = hookedTool(slowMs, () => true);
    const model = new ScriptedProvider(["a", "b", "c", "d"].map((text) => ({ text })));
    const runtime = await open(space.dir, [tool], { models: [model], ...budget });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.slow"]) });
    const diagnostics: string[] = [];
    session.subscribe((event) => event.type === "diagnostic" && diagnostics.push(event.message));
    for (const text of ["one", "two", "three", "four"]) await session.runTurn(text);
    expect(counter.calls).toBe(3);
    expect(model.requests.map((request) => request.facts)).toEqual([{}, {}, {}, {}]);
    expect(diagnostics.at(-1)).toBe("test__slow: skipped for this session: modelContext was too slow in 3 turns in a row");
  });

  it("L1 the slow-hook budget is the host's choice (modelContextBudgetMs)", async () => {
    const hook = nativeTool("test.slowish", async () => ({ json: null }), {
      modelContext: () => {
        const until = performance.now() + 20;
        while (performance.now() < until) {
          // busy for 20 ms: slow under the 5 ms default, fine under a 10 s budget
        }
        return { late: true };
      },
    });
    const model = new ScriptedProvider([{ text: "a" }]);
    const runtime = await open(space.dir, [hook], { models: [model], modelContextBudgetMs: 10_000 });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.slowish"]) });
    await session.runTurn("one");
    expect(model.requests[0]!.facts).toEqual({ test__slowish: { late: true } });
  });

  it("L2 facts are never journaled", async () => {
    const marker = "fact-marker-7c1f";
    const tool = nativeTool("test.facts", async () => ({ json: null }), { modelContext: () => ({ marker }) });
    const model = new ScriptedProvider([{ text: "ok" }]);
    const runtime = await open(space.dir, [tool], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.facts"]) });
    await session.runTurn("hello");
    expect(model.requests[0]!.facts).toEqual({ test__facts: { marker } });
    await runtime.journal.flush();
    expect([...runtime.journal.exportSession(session.id)].join("\n")).not.toContain(marker);
  });
});
