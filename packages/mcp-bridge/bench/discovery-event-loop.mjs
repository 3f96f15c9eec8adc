// Discovery of one provider that publishes a large catalog of large schemas (10,000 tools
// of about 1 KB of input schema each, in pages of 1,000; BENCH_PAGE=10000 sends one page), through the bridge: the time it
// takes and the longest the event loop waited meanwhile, which is how long a signal or a
// timer of the host could wait. Prints figures; asserts nothing. Run after a build:
//   node packages/mcp-bridge/bench/discovery-event-loop.mjs
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { McpBridge } from "../dist/index.js";

const server = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test/fixtures/big-catalog.mjs");
const TOOLS = Number(process.env.BENCH_TOOLS ?? 10_000);
const PROPERTIES = Number(process.env.BENCH_SCHEMA_PROPERTIES ?? 7);
const PAGE = Number(process.env.BENCH_PAGE ?? 1000);
const ROUNDS = 3;

for (let round = 0; round < ROUNDS; round++) {
  const bridge = new McpBridge([
    {
      transport: "stdio",
      namespace: "big",
      program: process.execPath,
      args: [server],
      env: { TOOL_COUNT: String(TOOLS), PAGE_SIZE: String(PAGE), SCHEMA_PROPERTIES: String(PROPERTIES) },
    },
  ]);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const { catalogs, unavailable } = await bridge.openSession("bench").discover(["big"]);
  const took = performance.now() - started;
  delay.disable();
  if (unavailable.length > 0) throw new Error(`discovery failed: ${JSON.stringify(unavailable)}`);
  const schemaBytes = catalogs[0].tools.reduce((sum, tool) => sum + JSON.stringify(tool.inputSchema).length, 0);
  console.log(
    `round ${round + 1}: ${catalogs[0].tools.length} tools, ${(schemaBytes / 1024 / 1024).toFixed(1)} MiB of input schemas: discovery ${took.toFixed(0)} ms, ` +
      `longest event-loop delay ${(delay.max / 1e6).toFixed(1)} ms (p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms)`,
  );
  await bridge.dispose();
  await bridge.joinCleanup();
}
