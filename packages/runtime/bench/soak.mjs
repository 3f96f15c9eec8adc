#!/usr/bin/env node
// A soak: the same mixed, partly hostile workload round after round in one process, with
// the memory, handles, descriptors and child processes left after each round printed. A
// leak shows as a figure that climbs round after round while the work stays the same;
// nothing is asserted on the figures (machines here are shared and noisy). The workload's
// own outcomes are checked: a round whose calls failed fast would measure nothing.
//
// Each round opens sessions side by side, and each session runs three model turns (one
// that completes with a native, a failing, a hook-carrying and an MCP call; one whose
// tool ignores its abort and is abandoned at the call bound, E1/E4; one cancelled while
// its tool runs), host calls (native, MCP, cancelled, flooding progress), then closes.
// Half the sessions go through approval (the approver answers some calls for the session,
// which is remembered, and the others once); the other half bypass it.
//
//   node --expose-gc bench/soak.mjs            (SOAK_ROUNDS=12, SOAK_SESSIONS=24, SOAK_MCP_SESSIONS=4)
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { ToolRegistry } from "@openworker/registry";
import { toolError } from "@openworker/tools-sdk";
import { Runtime } from "../dist/index.js";
import { childStats, openDescriptors } from "../../../scripts/proc-stats.mjs";
import { benchWorkspace, mutableServer } from "./workspace.mjs";

if (typeof global.gc !== "function") {
  console.error("soak: run with node --expose-gc (pnpm soak does): without a collection before each reading the heap figures say nothing");
  process.exit(2);
}
const ROUNDS = Number(process.env.SOAK_ROUNDS ?? 12);
const SESSIONS = Number(process.env.SOAK_SESSIONS ?? 24);
// Each MCP session starts its own server (M4): a few per round exercise start and teardown.
const MCP_SESSIONS = Math.min(SESSIONS, Number(process.env.SOAK_MCP_SESSIONS ?? 4));
const HOST_CALLS = Number(process.env.SOAK_HOST_CALLS ?? 60);
// The call bound (E1) of every session: the abandoned tool costs each session this much a
// round. Long enough that the calls meant to succeed do on a busy machine.
const CALL_BOUND_MS = Number(process.env.SOAK_CALL_BOUND_MS ?? 1_000);

const { dir, hostEntry, bundle: writeBundle } = benchWorkspace("soak");
const natives = ["soak.ok", "soak.fails", "soak.hangs", "soak.slow", "soak.floods", "soak.grant"];
const nativeBundle = writeBundle("native", natives);
const mcpBundle = writeBundle("mcp", [...natives, "mut.status_get"]);

const tool = (name, call, hooks = {}) => ({
  descriptor: () => ({ name, description: `soak tool ${name}`, version: "1", inputSchema: { type: "object", properties: { n: { type: "integer" } } } }),
  call,
  ...hooks,
});
// The grants a hook-carrying tool holds: T5 must bring it back to none once every session closed.
const grants = new Set();
const registry = new ToolRegistry();
registry.register(tool("soak.ok", async () => ({ json: { ok: true } })));
registry.register(tool("soak.fails", async () => toolError("REFUSED", "the soak says no")));
registry.register(tool("soak.hangs", () => new Promise(() => undefined)));
// Each session waits for its slow tool to start before cancelling it: a cancellation timed
// by a timer of its own would race the call on a loaded machine (a timer is late by as
// much as the event loop is busy, and this workload keeps it busy).
const slowStarted = new Map();
const whenSlowStarts = (sessionId) => new Promise((resolve) => slowStarted.set(sessionId, resolve));
registry.register(
  tool(
    "soak.slow",
    (context) =>
      new Promise((resolve, reject) => {
        slowStarted.get(context.sessionId)?.();
        slowStarted.delete(context.sessionId);
        const timer = setTimeout(() => resolve({ json: "slow" }), 5_000);
        context.signal.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            reject(context.signal.reason);
          },
          { once: true },
        );
      }),
  ),
);
registry.register(
  tool("soak.floods", async (context) => {
    for (let i = 0; i < 300; i++) context.progress.report({ message: `tick ${i}` });
    return { json: "flooded" };
  }),
);
registry.register(
  tool(
    "soak.grant",
    async (context) => {
      grants.add(context.sessionId);
      return { json: "granted" };
    },
    {
      modelContext: (sessionId) => ({ granted: grants.has(sessionId) }),
      turnFinished: (sessionId) => void grants.delete(sessionId),
      revoke: (sessionId) => void grants.delete(sessionId),
    },
  ),
);
registry.registerMcp({ namespace: "mut", program: process.execPath, args: [mutableServer] });

// A model that plans each turn from the user's words: tool calls first, then an answer.
const plans = {
  complete: (mcp) => [
    { name: "soak__ok", arguments: { n: 1 } },
    { name: "soak__fails", arguments: {} },
    { name: "soak__grant", arguments: {} },
    ...(mcp ? [{ name: "mut__status_get", arguments: {} }] : []),
  ],
  abandon: () => [{ name: "soak__hangs", arguments: {} }],
  cancel: () => [{ name: "soak__slow", arguments: {} }],
};
let modelCalls = 0;
const model = {
  id: "soak",
  defaultModel: "soak-1",
  async complete(request) {
    if (request.signal.aborted) throw request.signal.reason;
    const last = request.messages.at(-1);
    if (last?.role !== "user") return { text: "done", toolCalls: [] };
    const [plan, mcp] = last.content.split(" ");
    return { text: "", toolCalls: plans[plan](mcp === "mcp").map((call) => ({ id: `call_${++modelCalls}`, ...call })) };
  },
  listModels: () => [{ provider: "soak", model: "soak-1" }],
};

const runtime = await Runtime.openWithRegistry(registry, {
  workspace: dir,
  journal: { path: path.join(dir, "journal.db") },
  hostEntry,
  models: [model],
  approver: (request) => ({ approved: true, scope: request.callId.endsWith("1") ? "session" : "once", who: "soak" }),
});

const expect = (label, ok, detail) => {
  if (!ok) throw new Error(`soak: ${label} (${JSON.stringify(detail).slice(0, 400)})`);
};
let calls = 0;
const oneSession = async (index) => {
  const mcp = index < MCP_SESSIONS;
  const session = await runtime.openSession({
    bundle: mcp ? mcpBundle : nativeBundle,
    policy: index % 2 === 0 ? { mode: "bypass" } : {},
    callTimeoutMs: CALL_BOUND_MS,
  });
  const events = [];
  const unsubscribe = session.subscribe((event) => events.push(event.type));
  const done = await session.runTurn(`complete ${mcp ? "mcp" : "native"}`);
  expect("a completing turn", done.completed && done.calls.length === (mcp ? 4 : 3), {
    reason: done.reason,
    calls: done.calls.map((c) => [c.qualifiedName, c.outcome, c.code]),
  });
  const abandoned = await session.runTurn("abandon");
  expect("a turn whose tool is abandoned at its bound", abandoned.reason === "fault" && abandoned.calls[0]?.outcome === "timed_out", {
    reason: abandoned.reason,
    calls: abandoned.calls,
  });
  const slowTurn = whenSlowStarts(session.id);
  const cancelled = session.runTurn("cancel");
  await slowTurn;
  session.cancel("the soak cancels");
  expect("a cancelled turn", (await cancelled).reason === "cancelled", { reason: (await cancelled).reason });
  const hostCalls = [];
  for (let i = 0; i < HOST_CALLS; i++) hostCalls.push(session.callTool("soak.ok", { n: i }));
  if (mcp) for (let i = 0; i < HOST_CALLS / 3; i++) hostCalls.push(session.callTool("mut.status_get", {}));
  const reports = await Promise.all(hostCalls);
  expect(
    "host calls",
    reports.every((report) => report.outcome === "succeeded"),
    reports.find((report) => report.outcome !== "succeeded"),
  );
  const controller = new AbortController();
  const slowCall = whenSlowStarts(session.id);
  const stopped = session.callTool("soak.slow", {}, { signal: controller.signal });
  await slowCall;
  controller.abort();
  expect("a cancelled host call", (await stopped).outcome === "cancelled", await stopped);
  const flooded = await session.callTool("soak.floods", {});
  expect("a flooding host call stops at the progress bound (E2)", flooded.outcome === "limit_exceeded", flooded);
  calls += done.calls.length + abandoned.calls.length + 1 + reports.length + 2;
  unsubscribe();
  await session.close();
  expect("events were delivered", events.includes("turn_finished"), events.slice(0, 5));
};

// Handles, descriptors and child processes of this process (descriptors and children from
// /proc: Linux). One child stays for the process's life: the MCP bridge's reaper (see the
// bridge's README).
const mib = (bytes) => (bytes / 1024 / 1024).toFixed(2);
const reading = async () => {
  // Abandoned tools (E1) hold their closures until they settle, which these never do:
  // their share is part of what a round leaves, by design (the README says so).
  await new Promise((resolve) => setTimeout(resolve, 100));
  global.gc();
  global.gc();
  const memory = process.memoryUsage();
  return {
    heap: memory.heapUsed,
    external: memory.external,
    rss: memory.rss,
    handles: process.getActiveResourcesInfo().length,
    fds: openDescriptors(),
    children: childStats().length,
  };
};

// How long the event loop went without turning, round by round: a host's timers and I/O
// wait that long (this workload starts every session's calls at once on purpose).
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const started = performance.now();
const first = await reading();
const readings = [first];
console.log(`soak: ${ROUNDS} rounds of ${SESSIONS} sessions (${MCP_SESSIONS} with an MCP server), ${HOST_CALLS} host calls each`);
console.log(
  `round  0: heap ${mib(first.heap)} MiB, external ${mib(first.external)} MiB, RSS ${mib(first.rss)} MiB, handles ${first.handles}, fds ${first.fds}, children ${first.children}`,
);
for (let round = 1; round <= ROUNDS; round++) {
  const before = calls;
  await Promise.all(Array.from({ length: SESSIONS }, (_, index) => oneSession(index)));
  const now = await reading();
  readings.push(now);
  const previous = readings.at(-2);
  const grew = now.heap - previous.heap;
  console.log(
    `round ${String(round).padStart(2)}: heap ${mib(now.heap)} MiB (${grew >= 0 ? "+" : "−"}${(Math.abs(grew) / 1024).toFixed(0)} KiB), external ${mib(now.external)} MiB, RSS ${mib(now.rss)} MiB, handles ${now.handles}, fds ${now.fds}, children ${now.children}; ${calls - before} calls; grants held ${grants.size}; event loop delay p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`,
  );
  loopDelay.reset();
}
// The slope over the second half: the first rounds fill caches, compile code and grow pools.
const half = readings.slice(Math.floor(readings.length / 2));
const slope = (half.at(-1).heap - half[0].heap) / (half.length - 1);
const perRoundCalls = calls / ROUNDS;
console.log(
  `heap growth over the last ${half.length - 1} rounds: ${(slope / 1024).toFixed(1)} KiB a round ` +
    `(${(slope / SESSIONS).toFixed(0)} B a session, ${(slope / perRoundCalls).toFixed(1)} B a call); ` +
    `${calls} calls in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
await runtime.close();
const closed = await reading();
console.log(`after runtime.close(): heap ${mib(closed.heap)} MiB, handles ${closed.handles}, fds ${closed.fds}, children ${closed.children}`);
