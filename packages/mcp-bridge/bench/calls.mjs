// Throughput and latency of MCP calls through the bridge against the raw SDK client on
// the same 2025-era server (with the client and server CPU each side costs per call), the
// bridge's CPU per call to a 2026-07-28 server, and parallel discovery of 10 providers ×
// 500 tools. Prints figures;
// asserts nothing. Run `pnpm --filter @openworker/mcp-bridge bench` after a build.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { McpBridge } from "../dist/index.js";
import { childStats, processCpuMicros as processCpu } from "../../../scripts/proc-stats.mjs";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test/fixtures");
const server = path.join(fixtures, "big-catalog.mjs");
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 2000);
const PARALLEL_TOTAL = Number(process.env.BENCH_PARALLEL ?? 8000);
const IN_FLIGHT = 32;
const SLICES = 10;
const ROUNDS = 3;
const env = (extra) => ({ PATH: process.env.PATH ?? "", ...extra });

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

// One slice of measurements: sequential latencies, then IN_FLIGHT concurrent calls.
async function slice(call, sequential, parallel, into) {
  for (let i = 0; i < sequential; i++) {
    const started = performance.now();
    await call();
    into.latencies.push(performance.now() - started);
  }
  let next = 0;
  const cpu = process.cpuUsage();
  const serverCpu = processCpu(into.serverPid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < parallel) await call();
    }),
  );
  into.seconds += (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  into.cpu += used.user + used.system;
  if (serverCpu !== undefined) into.serverCpu += (processCpu(into.serverPid) ?? serverCpu) - serverCpu;
  into.calls += parallel;
}

async function rawClient(extraEnv = {}) {
  const client = new Client({ name: "bench-raw", version: "1.0.0" });
  const transport = new StdioClientTransport({ command: process.execPath, args: [server], env: env(extraEnv), stderr: "ignore" });
  await client.connect(transport);
  return { client, pid: transport.pid };
}

async function calls() {
  const { client: raw, pid: rawServer } = await rawClient({ TOOL_COUNT: "1" });
  const bridge = new McpBridge([{ transport: "stdio", namespace: "bench", program: process.execPath, args: [server], env: { TOOL_COUNT: "1" } }]);
  const session = bridge.openSession("bench");
  await session.discover(["bench"]);
  const raw_ = () => raw.callTool({ name: "echo", arguments: { text: "ping" } });
  const bridge_ = async () => {
    const result = await session.callTool("bench", "echo", { text: "ping" }, {});
    if (result.outcome !== "succeeded") throw new Error(`bridge call ${result.outcome}: ${result.error?.message}`);
  };
  const bridgeServer = childStats()
    .map(({ pid }) => pid)
    .find((pid) => pid !== rawServer);
  const totals = (serverPid) => ({ latencies: [], seconds: 0, cpu: 0, calls: 0, serverPid, serverCpu: 0 });
  const results = { raw: totals(rawServer), bridge: totals(bridgeServer) };
  for (let i = 0; i < 300; i++) await Promise.all([raw_(), bridge_()]); // warm-up
  // Interleaved slices, alternating which side goes first, so that load drifting on a
  // shared machine hits both sides alike.
  for (let round = 0; round < SLICES; round++) {
    const order = round % 2 === 0 ? ["raw", "bridge"] : ["bridge", "raw"];
    for (const side of order) await slice(side === "raw" ? raw_ : bridge_, SEQUENTIAL / SLICES, PARALLEL_TOTAL / SLICES, results[side]);
  }
  await raw.close();
  await bridge.dispose();
  await bridge.joinCleanup();
  const rate = (side) => side.calls / side.seconds;
  console.log(`calls (${SEQUENTIAL} sequential and ${PARALLEL_TOTAL} at ${IN_FLIGHT} in flight per side, in ${SLICES} interleaved slices)`);
  console.log(`  sequential p50   raw SDK client ${median(results.raw.latencies).toFixed(3)} ms   bridge ${median(results.bridge.latencies).toFixed(3)} ms`);
  console.log(
    `  ${IN_FLIGHT}-in-flight      raw SDK client ${rate(results.raw).toFixed(0)} calls/s   bridge ${rate(results.bridge).toFixed(0)} calls/s   ratio ${(rate(results.bridge) / rate(results.raw)).toFixed(2)}×`,
  );
  console.log(
    `  client CPU/call  raw SDK client ${(results.raw.cpu / results.raw.calls).toFixed(1)} µs   bridge ${(results.bridge.cpu / results.bridge.calls).toFixed(1)} µs (the server is the same program)`,
  );
  if (results.raw.serverPid !== undefined && results.bridge.serverPid !== undefined && processCpu(process.pid) !== undefined) {
    console.log(
      `  server CPU/call  raw SDK client's ${(results.raw.serverCpu / results.raw.calls).toFixed(1)} µs   bridge's ${(results.bridge.serverCpu / results.bridge.calls).toFixed(1)} µs (10 ms clock ticks)`,
    );
  }
}

async function discovery() {
  const PROVIDERS = 10;
  const TOOLS = "500";
  const PAGE = "100";
  const namespaces = Array.from({ length: PROVIDERS }, (_, i) => `p${i}`);
  const rawTimes = [];
  const bridgeTimes = [];
  for (let round = 0; round < ROUNDS; round++) {
    let started = performance.now();
    const clients = await Promise.all(
      namespaces.map(async () => {
        const { client } = await rawClient({ TOOL_COUNT: TOOLS, PAGE_SIZE: PAGE });
        const tools = [];
        let cursor;
        do {
          const page = await client.listTools(cursor === undefined ? {} : { cursor });
          tools.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor);
        if (tools.length !== 500) throw new Error(`raw listed ${tools.length}`);
        return client;
      }),
    );
    rawTimes.push(performance.now() - started);
    await Promise.all(clients.map((client) => client.close()));

    const bridge = new McpBridge(
      namespaces.map((namespace) => ({
        transport: "stdio",
        namespace,
        program: process.execPath,
        args: [server],
        env: { TOOL_COUNT: TOOLS, PAGE_SIZE: PAGE },
      })),
    );
    started = performance.now();
    const { catalogs, unavailable } = await bridge.openSession("discovery").discover(namespaces);
    bridgeTimes.push(performance.now() - started);
    if (unavailable.length > 0 || catalogs.some((catalog) => catalog.tools.length !== 500)) throw new Error(`bridge discovery: ${JSON.stringify(unavailable)}`);
    await bridge.dispose();
    await bridge.joinCleanup();
  }
  console.log(`discovery of ${PROVIDERS} providers × ${TOOLS} tools (pages of ${PAGE}), in parallel, spawn included (median of ${ROUNDS})`);
  console.log(`  raw SDK clients ${median(rawTimes).toFixed(0)} ms   bridge ${median(bridgeTimes).toFixed(0)} ms (with per-tool fingerprints)`);
}

// The bridge's calls to a server on protocol 2026-07-28, which go through the SDK's client.
async function modernCalls() {
  const bridge = new McpBridge([{ transport: "stdio", namespace: "modern", program: process.execPath, args: [path.join(fixtures, "modern-only.mjs")] }]);
  const session = bridge.openSession("modern");
  await session.discover(["modern"]);
  const call = async () => {
    const result = await session.callTool("modern", "echo", { text: "ping" }, {});
    if (result.outcome !== "succeeded") throw new Error(`modern call ${result.outcome}: ${result.error?.message}`);
  };
  const side = { latencies: [], seconds: 0, cpu: 0, calls: 0, serverPid: undefined, serverCpu: 0 };
  for (let i = 0; i < 300; i++) await call();
  for (let round = 0; round < SLICES; round++) await slice(call, SEQUENTIAL / SLICES, PARALLEL_TOTAL / SLICES, side);
  await bridge.dispose();
  await bridge.joinCleanup();
  console.log("calls to a 2026-07-28 server (through the SDK's client)");
  console.log(
    `  sequential p50 ${median(side.latencies).toFixed(3)} ms   ${IN_FLIGHT}-in-flight ${(side.calls / side.seconds).toFixed(0)} calls/s   client CPU/call ${(side.cpu / side.calls).toFixed(1)} µs`,
  );
}

await calls();
await modernCalls();
await discovery();
