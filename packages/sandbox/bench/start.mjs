// What a sandbox costs a provider: the time from a session's discover() to its catalog
// (process start, MCP handshake, listing) and a call's round trip, for the same MCP server
// on the host, under bubblewrap without network, and under bubblewrap with a host
// allowlist (the sandbox's entry and the host's proxy in play). Prints figures; asserts
// nothing. Run `pnpm --filter @openworker/sandbox bench` after a build (Linux, bwrap).
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { realpathSync } from "node:fs";
import { McpBridge } from "@openworker/mcp-bridge";
import { bubblewrapLauncher } from "../dist/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const probeServer = path.join(here, "..", "test", "fixtures", "probe-server.mjs");
const sdk = realpathSync(createRequire(import.meta.url).resolve("@modelcontextprotocol/sdk/package.json"));
const reads = [path.join(here, "..", "test", "fixtures"), path.join(here, "..", "node_modules"), sdk.slice(0, sdk.indexOf("/node_modules/.pnpm/") + 19)];
const STARTS = Number(process.env.BENCH_STARTS ?? 10);
const CALLS = Number(process.env.BENCH_CALLS ?? 500);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function measure(label, definition) {
  const starts = [];
  const calls = [];
  const launcher = bubblewrapLauncher();
  for (let round = 0; round < STARTS; round++) {
    const bridge = new McpBridge([definition], { sandbox: launcher });
    const session = bridge.openSession(`bench-${round}`);
    const started = performance.now();
    const { unavailable } = await session.discover(["probe"]);
    starts.push(performance.now() - started);
    if (unavailable.length > 0) throw new Error(`${label}: ${JSON.stringify(unavailable)}`);
    if (round === 0) {
      for (let i = 0; i < CALLS; i++) {
        const call = performance.now();
        await session.callTool("probe", "cwd", {}, {});
        calls.push(performance.now() - call);
      }
    }
    await session.close();
    await bridge.dispose();
  }
  return { label, start: median(starts), call: median(calls) };
}

const base = { transport: "stdio", namespace: "probe", program: process.execPath, args: [probeServer], env: {} };
const rows = [
  await measure("on the host", base),
  await measure("bubblewrap, no network", { ...base, placement: "sandbox", sandbox: { read: reads } }),
  await measure("bubblewrap, allowlist (entry + proxy)", { ...base, placement: "sandbox", sandbox: { read: reads, network: { allow: ["127.0.0.1:9"] } } }),
];
console.log(`provider start to catalog and call round trip, median (${STARTS} starts, ${CALLS} calls; Node.js ${process.version})`);
console.log("| placement | start to catalog | call round trip |");
console.log("|---|---|---|");
for (const row of rows) console.log(`| ${row.label} | ${row.start.toFixed(1)} ms | ${row.call.toFixed(2)} ms |`);
