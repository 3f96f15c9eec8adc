#!/usr/bin/env node
// What tracing costs a governed call: the same runtime, tool and policy (bypass, journal
// on, grouped durability), with tracing off (no provider: the session is not subscribed),
// with the API's no-op providers (the runtime's events and this package's listener, no SDK),
// and on (the OpenTelemetry SDK, spans batched and metrics read every second, exported over
// OTLP/HTTP to a collector process). Prints, per host-driven call and per model turn of one
// call, the p50 wall time and the process CPU of each side, and what each adds to "off".
import { fork } from "node:child_process";
import { metrics, trace } from "@opentelemetry/api";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { ToolRegistry } from "@openworker/registry";
import { Runtime } from "@openworker/runtime";
import { ScriptedProvider } from "@openworker/runtime/testing";
import { RuntimeTelemetry } from "../dist/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const TURNS = Number(process.env.BENCH_TURNS ?? 4_000);
const SLICES = Number(process.env.BENCH_SLICES ?? 10);

// The journal grows with the run: the folder is removed however the run ends.
const dir = mkdtempSync(path.join(tmpdir(), "ow-bench-otel-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const hostEntry = path.join(dir, "host.js");
writeFileSync(hostEntry, "// bench host\n");
const bundle = path.join(dir, "bundle");
mkdirSync(bundle);
writeFileSync(path.join(bundle, "manifest.md"), "---\nname: bench\n---\nCalls the tool.\n");
writeFileSync(path.join(bundle, "tools.json"), JSON.stringify({ version: 3, tools: ["bench.noop"] }));

const collector = fork(path.join(here, "collector.mjs"), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
const nextMessage = () => new Promise((resolve) => collector.once("message", resolve));
const { url } = await nextMessage();

// Batches big and frequent enough that no span is dropped at this rate (the SDK's
// defaults, 2,048 queued and an export every 5 s, drop most of them here).
const tracerProvider = new TracerProvider({
  spanProcessors: [
    new BatchSpanProcessor({
      exporter: new OTLPTraceExporter({ url: `${url}/v1/traces` }),
      maxQueueSize: 65_536,
      maxExportBatchSize: 2_048,
      scheduledDelayMillis: 200,
    }),
  ],
});
const meterProvider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${url}/v1/metrics` }), exportIntervalMillis: 1_000 })],
});
const telemetry = new RuntimeTelemetry({ tracerProvider, meterProvider });

const noopTool = {
  descriptor: () => ({
    name: "bench.noop",
    description: "Does nothing.",
    version: "1",
    inputSchema: { type: "object", properties: { n: { type: "integer" } } },
  }),
  call: async () => ({ json: { ok: true } }),
};
const registry = new ToolRegistry();
registry.register(noopTool);
// Two steps a turn (the call, then the answer), for warm-up and every slice of both sides.
const steps = (turns) => Array.from({ length: turns }, (_, n) => [{ toolCalls: [{ name: "bench__noop", arguments: { n } }] }, { text: "done" }]).flat();
const warmTurns = Math.ceil(TURNS / 10);
// One script for both sessions: turns run one at a time, each taking its two steps.
const model = new ScriptedProvider(steps(3 * (Math.ceil(TURNS / SLICES) * SLICES + warmTurns)), { recordRequests: false, whenExhausted: "fail" });
const runtime = await Runtime.openWithRegistry(registry, { workspace: dir, journal: { path: path.join(dir, "journal.db") }, hostEntry, models: [model] });
const policy = { mode: "bypass" };
const off = await runtime.openSession({ bundle, policy });
const on = await runtime.openSession({ bundle, policy });
telemetry.instrument(on);
// No global providers are registered: the API's are no-ops.
const noop = await runtime.openSession({ bundle, policy });
new RuntimeTelemetry({ tracerProvider: trace.getTracerProvider(), meterProvider: metrics.getMeterProvider() }).instrument(noop);

const succeeded = (label, ok, detail) => {
  if (!ok) throw new Error(`${label}: did not succeed (${JSON.stringify(detail).slice(0, 300)})`);
};
const percentile = (values, p) => values.slice().sort((a, b) => a - b)[Math.floor(values.length * p)];
const micros = (ms) => (ms * 1000).toFixed(1);
const signed = (text) => (text.startsWith("-") ? text : `+${text}`);

/** Runs `count` of `one()` one after another; returns each one's wall time (ms) and the CPU (µs) of them all. */
async function measure(count, one) {
  const times = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await one(i);
    times.push(performance.now() - t0);
  }
  const used = process.cpuUsage(cpu);
  return { times, cpu: used.user + used.system };
}

/**
 * The two sides in interleaved slices (off, on, then on, off, …), so a busy moment on a
 * shared machine falls on both. Prints each side's p50 and CPU per operation, and the
 * difference: what tracing costs.
 */
async function compare(label, total, sides) {
  const results = sides.map((side) => ({ ...side, times: [], cpu: 0 }));
  const perSlice = Math.ceil(total / SLICES);
  for (let slice = 0; slice < SLICES; slice++) {
    const order = slice % 2 === 0 ? results : [...results].reverse();
    for (const side of order) {
      const { times, cpu } = await measure(perSlice, side.one);
      side.times.push(...times);
      side.cpu += cpu;
    }
  }
  const [base, ...others] = results.map((side) => ({ name: side.name, p50: percentile(side.times, 0.5), cpu: side.cpu / side.times.length }));
  console.log(`${label}, ${perSlice * SLICES} on each side in ${SLICES} interleaved slices:`);
  console.log(`  ${base.name}: p50 ${micros(base.p50)} µs, process CPU ${base.cpu.toFixed(1)} µs`);
  for (const side of others) {
    console.log(
      `  ${side.name}: p50 ${micros(side.p50)} µs (${signed(micros(side.p50 - base.p50))}), process CPU ${side.cpu.toFixed(1)} µs (${signed((side.cpu - base.cpu).toFixed(1))})`,
    );
  }
}

const hostCall = (session, name) => async (n) => {
  const report = await session.callTool("bench.noop", { n });
  succeeded(name, report.outcome === "succeeded", report);
};
const turn = (session, name) => async () => {
  const result = await session.runTurn("call it");
  succeeded(name, result.completed && result.calls.length === 1 && result.calls[0].outcome === "succeeded", result);
};

// Untimed first: compilation.
await measure(Math.ceil(CALLS / 5), hostCall(off, "warm-up off"));
await measure(Math.ceil(CALLS / 5), hostCall(on, "warm-up on"));
await measure(Math.ceil(CALLS / 5), hostCall(noop, "warm-up no-op"));
await compare("host-driven call (an execute_tool span with 3 events, 2 measurements)", CALLS, [
  { name: "tracing off (none)", one: hostCall(off, "off") },
  { name: "no-op providers", one: hostCall(noop, "no-op") },
  { name: "tracing on (SDK, OTLP/HTTP)", one: hostCall(on, "on") },
]);

await measure(warmTurns, turn(off, "warm-up off"));
await measure(warmTurns, turn(on, "warm-up on"));
await measure(warmTurns, turn(noop, "warm-up no-op"));
await compare("model turn of one call (invoke_agent, 2 chat and 1 execute_tool spans)", TURNS, [
  { name: "tracing off (none)", one: turn(off, "off") },
  { name: "no-op providers", one: turn(noop, "no-op") },
  { name: "tracing on (SDK, OTLP/HTTP)", one: turn(on, "on") },
]);

await tracerProvider.forceFlush();
await meterProvider.forceFlush();
collector.send("count");
const { spans, requests, bytes } = await nextMessage();
const expected = Math.ceil(CALLS / 5) + Math.ceil(CALLS / SLICES) * SLICES + (warmTurns + Math.ceil(TURNS / SLICES) * SLICES) * 4;
console.log(
  `the collector took ${spans.toLocaleString("en-US")} spans of ${expected.toLocaleString("en-US")} made (${requests} requests, ${Math.round(bytes / 1024 / 1024)} MB of OTLP JSON)`,
);

await tracerProvider.shutdown();
await meterProvider.shutdown();
await runtime.close();
collector.disconnect();
