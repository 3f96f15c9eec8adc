import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { Runtime } from "../dist/index.js";
import { benchWorkspace } from "./workspace.mjs";
const { dir, hostEntry, bundle: writeBundle } = benchWorkspace("bench-prof");
const bundle = writeBundle("native", ["bench.noop"]);
const noop = { descriptor: () => ({ name: "bench.noop", description: "Does nothing.", version: "1", inputSchema: { type: "object", properties: { n: { type: "integer" } } } }), call: async () => ({ json: { ok: true } }) };
const registry = new ToolRegistry();
registry.register(noop);
const runtime = await Runtime.openWithRegistry(registry, { workspace: dir, journal: { path: path.join(dir, "journal.db") }, hostEntry });
const sessions = await Promise.all(Array.from({ length: 32 }, () => runtime.openSession({ bundle, policy: { mode: "bypass" } })));
const run = (n) => Promise.all(sessions.map(async (s) => { for (let i = 0; i < n; i++) { const r = await s.callTool("bench.noop", { n: i }); if (r.outcome !== "succeeded") throw new Error(JSON.stringify(r)); } }));
await run(600);
for (let k = 0; k < 3; k++) {
  const t = process.hrtime.bigint(); const c = process.cpuUsage();
  await run(3000);
  const s = Number(process.hrtime.bigint() - t) / 1e9; const cpu = process.cpuUsage(c);
  console.log(`${Math.round(96000 / s)} calls/s, ${((cpu.user + cpu.system) / 96000).toFixed(1)} µs CPU/call`);
}
await runtime.close?.();
process.exit(0);
