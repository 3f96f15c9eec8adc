#!/usr/bin/env node
// Governed in-process calls: policy bypass, journal on (grouped durability).
// Prints calls/s with 32 concurrent sessions, p50 overhead per call over the tool's own
// time, the same for MCP calls beside the raw SDK client, and the RSS of 1,000 idle sessions.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ToolRegistry } from "@openworker/registry";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Runtime } from "../dist/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), "ow-bench-runtime-"));
const bundle = path.join(dir, "bundle");
mkdirSync(bundle);
writeFileSync(path.join(bundle, "manifest.md"), "---\nname: bench\n---\nBench.\n");
writeFileSync(path.join(bundle, "tools.json"), JSON.stringify({ version: 3, tools: ["bench.noop", "mut.status_get"] }));
writeFileSync(path.join(dir, "host.js"), "// bench host\n");

const noop = {
  descriptor: () => ({ name: "bench.noop", description: "Does nothing.", version: "1", inputSchema: { type: "object", properties: { n: { type: "integer" } } } }),
  call: async () => ({ json: { ok: true } }),
};
const server = path.resolve(here, "../test/fixtures/mutable-server.mjs");
const registry = new ToolRegistry();
registry.register(noop);
registry.registerMcp({ namespace: "mut", program: process.execPath, args: [server] });
const runtime = await Runtime.openWithRegistry(registry, { workspace: dir, journal: { path: path.join(dir, "journal.db") }, hostEntry: path.join(dir, "host.js") });
const policy = { mode: "bypass" };

const percentile = (values, p) => values.slice().sort((a, b) => a - b)[Math.floor(values.length * p)];
const fmt = (n) => Math.round(n).toLocaleString("en-US");

// Native: 32 concurrent sessions.
const SESSIONS = 32;
const PER_SESSION = Number(process.env.BENCH_CALLS ?? 3000);
const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => runtime.openSession({ bundle, policy })));
for (const session of sessions) await session.callTool("bench.noop", { n: 0 }); // warm: prepare + compile once
let started = performance.now();
await Promise.all(sessions.map(async (session) => {
  for (let i = 0; i < PER_SESSION; i++) await session.callTool("bench.noop", { n: i });
}));
let seconds = (performance.now() - started) / 1000;
console.log(`native governed calls, ${SESSIONS} concurrent sessions: ${fmt((SESSIONS * PER_SESSION) / seconds)} calls/s (${SESSIONS * PER_SESSION} calls)`);

const sequential = [];
const own = [];
for (let i = 0; i < 5000; i++) {
  const t0 = performance.now();
  await noop.call();
  const t1 = performance.now();
  await sessions[0].callTool("bench.noop", { n: i });
  const t2 = performance.now();
  own.push(t1 - t0);
  sequential.push(t2 - t1);
}
console.log(`native p50 per call: ${(percentile(sequential, 0.5) * 1000).toFixed(1)} µs; tool's own p50 ${(percentile(own, 0.5) * 1000).toFixed(1)} µs; overhead p50 ${((percentile(sequential, 0.5) - percentile(own, 0.5)) * 1000).toFixed(1)} µs`);

// MCP: governed through the runtime beside the raw SDK client on the same server.
const mcpSession = sessions[1];
await mcpSession.callTool("mut.status_get", {});
const raw = new Client({ name: "bench", version: "1" });
await raw.connect(new StdioClientTransport({ command: process.execPath, args: [server] }));
const MCP_CALLS = Number(process.env.BENCH_MCP_CALLS ?? 4000);
const SLICES = Number(process.env.BENCH_SLICES ?? 10);
// Both sides run in interleaved slices (raw, governed, then governed, raw, …) so that a
// busy moment on this shared machine falls on both, not on one side's whole run.
const sides = [
  { label: "MCP raw SDK client", call: () => raw.callTool({ name: "status_get", arguments: {} }), times: [], seconds: 0, calls: 0 },
  { label: "MCP governed via runtime", call: () => mcpSession.callTool("mut.status_get", {}), times: [], seconds: 0, calls: 0 },
];
for (const side of sides) for (let i = 0; i < 200; i++) await side.call();
for (let slice = 0; slice < SLICES; slice++) {
  for (const side of slice % 2 === 0 ? sides : [...sides].reverse()) {
    for (let i = 0; i < MCP_CALLS / SLICES / 2; i++) {
      const t0 = performance.now();
      await side.call();
      side.times.push(performance.now() - t0);
    }
    const parallel = MCP_CALLS / SLICES;
    let next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next++ < parallel) await side.call();
    }));
    side.seconds += (performance.now() - t0) / 1000;
    side.calls += parallel;
  }
}
for (const side of sides) {
  console.log(`${side.label}: p50 ${(percentile(side.times, 0.5) * 1000).toFixed(0)} µs sequential; ${fmt(side.calls / side.seconds)} calls/s with 32 in flight`);
}
const [rawSide, governedSide] = sides;
console.log(`MCP governed/raw throughput: ${(governedSide.calls / governedSide.seconds / (rawSide.calls / rawSide.seconds)).toFixed(2)}× (${SLICES} interleaved slices)`);
await raw.close();

// Memory: 1,000 idle sessions.
global.gc?.();
const before = process.memoryUsage();
const idle = [];
for (let i = 0; i < 1000; i++) idle.push(await runtime.openSession({ bundle, policy }));
global.gc?.();
const after = process.memoryUsage();
const mib = (bytes) => (bytes / 1024 / 1024).toFixed(1);
console.log(`1,000 idle sessions: heap +${mib(after.heapUsed - before.heapUsed)} MiB (${((after.heapUsed - before.heapUsed) / 1000 / 1024).toFixed(1)} KiB each); RSS now ${mib(after.rss)} MiB (${after.rss >= before.rss ? "+" : "−"}${mib(Math.abs(after.rss - before.rss))} MiB)`);

await runtime.close();
rmSync(dir, { recursive: true, force: true });
