import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { McpBridge } from "../src/index.js";
import { StartGate } from "../src/process/start-gate.js";
import { fixture } from "./helpers.js";

/** A start the test settles by hand. */
function deferred() {
  let resolve!: (value: string) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<string>((yes, no) => ((resolve = yes), (reject = no)));
  return { promise, resolve, reject };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("provider starts are taken in turns (M4)", () => {
  it("M4 no more than the limit start at once; the others wait in order, a failed start passes its turn on", async () => {
    const gate = new StartGate(2, 60_000);
    const started: string[] = [];
    const starts = ["a", "b", "c", "d"].map((name) => ({ name, ...deferred() }));
    const runs = starts.map((start) =>
      gate.run(new AbortController().signal, () => {
        started.push(start.name);
        return start.promise;
      }),
    );
    await tick();
    expect(started).toEqual(["a", "b"]);
    expect(gate.queued).toBe(2);
    starts[1]!.reject(new Error("b failed"));
    await expect(runs[1]).rejects.toThrow("b failed");
    expect(started).toEqual(["a", "b", "c"]);
    starts[0]!.resolve("a done");
    expect(await runs[0]).toBe("a done");
    expect(started).toEqual(["a", "b", "c", "d"]);
    starts[2]!.resolve("c done");
    starts[3]!.resolve("d done");
    expect(await Promise.all([runs[2], runs[3]])).toEqual(["c done", "d done"]);
    // Every turn came back: two more start at once.
    const e = deferred();
    const f = deferred();
    const more = [gate.run(new AbortController().signal, () => e.promise), gate.run(new AbortController().signal, () => f.promise)];
    expect(gate.queued).toBe(0);
    e.resolve("e");
    f.resolve("f");
    expect(await Promise.all(more)).toEqual(["e", "f"]);
  });

  it("M4 a wait whose signal aborts rejects with its reason and takes no turn", async () => {
    const gate = new StartGate(1, 60_000);
    const first = deferred();
    const running = gate.run(new AbortController().signal, () => first.promise);
    const controller = new AbortController();
    let ran = false;
    const waiting = gate.run(controller.signal, async () => ((ran = true), "never"));
    const last = gate.run(new AbortController().signal, async () => "last");
    controller.abort(new Error("discovery cancelled"));
    await expect(waiting).rejects.toThrow("discovery cancelled");
    expect(gate.queued).toBe(1);
    first.resolve("first");
    expect(await running).toBe("first");
    expect(await last).toBe("last");
    expect(ran).toBe(false);
    const aborted = AbortSignal.abort(new Error("already cancelled"));
    const busy = deferred();
    const holder = gate.run(new AbortController().signal, () => busy.promise);
    await expect(gate.run(aborted, async () => "no")).rejects.toThrow("already cancelled");
    busy.resolve("done");
    await holder;
  });

  it("M4 cancelled waits are skipped when their turn comes: a closing runtime with thousands waiting cancels each at once", async () => {
    const gate = new StartGate(1, 60_000);
    const holder = deferred();
    const held = gate.run(new AbortController().signal, () => holder.promise);
    const controller = new AbortController();
    const cancelled = Array.from({ length: 5_000 }, () => gate.run(controller.signal, async () => "never"));
    let lastRan = false;
    const last = gate.run(new AbortController().signal, async () => ((lastRan = true), "last"));
    expect(gate.queued).toBe(5_001);
    controller.abort(new Error("runtime closing"));
    const outcomes = await Promise.allSettled(cancelled);
    expect(outcomes.every((outcome) => outcome.status === "rejected")).toBe(true);
    expect(gate.queued).toBe(1);
    expect(lastRan).toBe(false);
    holder.resolve("held");
    await held;
    expect(await last).toBe("last");
    expect(gate.queued).toBe(0);
  });

  it("M4 a start that does not settle holds its turn for the turn bound only, then the next one starts", async () => {
    const gate = new StartGate(1, 30);
    const hung = deferred();
    const started: string[] = [];
    const first = gate.run(new AbortController().signal, () => (started.push("hung"), hung.promise));
    const second = gate.run(new AbortController().signal, async () => (started.push("next"), "next done"));
    await tick();
    expect(started).toEqual(["hung"]);
    expect(await second).toBe("next done"); // after 30 ms, while the first still hangs
    expect(started).toEqual(["hung", "next"]);
    // The hung start settling later gives back nothing more: one turn, released once.
    hung.resolve("late");
    expect(await first).toBe("late");
    const a = deferred();
    const b = deferred();
    const c: string[] = [];
    const runs = [
      gate.run(new AbortController().signal, () => (c.push("a"), a.promise)),
      gate.run(new AbortController().signal, () => (c.push("b"), b.promise)),
    ];
    await tick();
    expect(c).toEqual(["a"]); // the limit still holds: one at a time
    a.resolve("a");
    b.resolve("b");
    expect(await Promise.all(runs)).toEqual(["a", "b"]);
  });

  it("M4 McpBridgeOptions.maxConcurrentStarts must be an integer of at least 1, maxStartTurnMs a number ≥ 0", () => {
    for (const bad of [0, 1.5, -1, Number.NaN]) {
      expect(() => new McpBridge([], { maxConcurrentStarts: bad })).toThrow(/maxConcurrentStarts must be an integer ≥ 1/);
    }
    expect(() => new McpBridge([], { maxStartTurnMs: -5 })).toThrow(/maxStartTurnMs must be a finite number ≥ 0/);
    expect(() => new McpBridge([], { maxConcurrentStarts: 3, maxStartTurnMs: 2_000 })).not.toThrow();
  });

  describe("across sessions", () => {
    let dir: string | undefined;
    afterEach(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    });

    it("M2 M4 sessions discovering at once start their stdio providers one turn at a time: each starts after the one before is ready", async () => {
      dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-starts-"));
      const log = path.join(dir, "starts.log");
      // A turn bound past any start's time on a busy machine: each start holds its turn until ready.
      const bridge = new McpBridge(
        [{ transport: "stdio", namespace: "logged", program: process.execPath, args: [fixture("logged-start.mjs")], env: { START_LOG: log } }],
        {
          maxConcurrentStarts: 1,
          maxStartTurnMs: 60_000,
        },
      );
      const sessions = ["s1", "s2", "s3", "s4"].map((id) => bridge.openSession(id));
      const results = await Promise.all(sessions.map((session) => session.discover(["logged"])));
      expect(results.map((result) => result.unavailable)).toEqual([[], [], [], []]);
      const events = readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((line) => line.split(" ")[0]);
      // With every start at once this reads start, start, start, start, ready, …
      expect(events).toEqual(["start", "ready", "start", "ready", "start", "ready", "start", "ready"]);
      expect((await sessions[3]!.callTool("logged", "ping", {}, {})).outcome).toBe("succeeded");
      await bridge.dispose();
      await bridge.joinCleanup();
    });

    it("M4 a provider that hangs before initialize holds up the next start for the turn bound only, not its connect bound", async () => {
      dir = mkdtempSync(path.join(tmpdir(), "mcp-bridge-starts-"));
      const log = path.join(dir, "starts.log");
      const bridge = new McpBridge(
        [
          { transport: "stdio", namespace: "silent", program: process.execPath, args: [fixture("never-initialize.mjs")], env: {} },
          { transport: "stdio", namespace: "logged", program: process.execPath, args: [fixture("logged-start.mjs")], env: { START_LOG: log } },
        ],
        { maxConcurrentStarts: 1, maxStartTurnMs: 200, connectTimeoutMs: 30_000, closeGraceMs: 300 },
      );
      const hung = bridge.openSession("hung").discover(["silent"]);
      const healthy = bridge.openSession("healthy").discover(["logged"]);
      const first = await Promise.race([hung.then(() => "hung provider's discovery"), healthy.then(() => "healthy provider's discovery")]);
      expect(first).toBe("healthy provider's discovery");
      expect((await healthy).unavailable).toEqual([]);
      await bridge.dispose(); // cancels the hung one's discovery
      expect((await hung).unavailable.map((provider) => provider.namespace)).toEqual(["silent"]);
      await bridge.joinCleanup();
    });
  });
});
