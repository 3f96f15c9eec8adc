// Resolution speed: 1,000 selected names against 10,000 registered native tools and
// 10 MCP catalogs of 500 tools. Prints cold and warm times and how many schemas were
// compiled (B5: never the same schema twice). Run after building: `pnpm bench`.
import { performance } from "node:perf_hooks";
import { ToolRegistry } from "@openworker/registry";
import { codeTool } from "@openworker/tools-sdk";
import { compiledSchemaCount, schemaFingerprint } from "@openworker/tools-sdk/internal/validation";
import { resolveSelection } from "../dist/index.js";

const NATIVES = 10_000;
const CATALOGS = 10;
const PER_CATALOG = 500;
const SELECTED_NATIVES = 500;
const SELECTED_PER_CATALOG = 50;
const WARM_RUNS = 200;

// Every tool has its own schema (worst case for compilation); each schema is compiled once.
const schemaFor = (name) => ({
  type: "object",
  properties: { [`${name.replaceAll(".", "_")}_query`]: { type: "string", minLength: 1 }, limit: { type: "integer", minimum: 1 } },
  required: [`${name.replaceAll(".", "_")}_query`],
  additionalProperties: false,
});

function catalogs() {
  return Array.from({ length: CATALOGS }, (_, c) => ({
    namespace: `mcp${c}`,
    tools: Array.from({ length: PER_CATALOG }, (_, t) => {
      const name = `remote_tool_${t}`;
      const inputSchema = schemaFor(`mcp${c}.${name}`);
      const description = `Remote tool ${t} of server ${c}.`;
      return { name, description, inputSchema, fingerprint: schemaFingerprint({ name, description, inputSchema }) };
    }),
  }));
}

let started = performance.now();
const registry = new ToolRegistry();
for (let i = 0; i < NATIVES; i++) {
  const name = `partner${i % 100}.tool_${i}`;
  registry.register(codeTool(name, `Native tool ${i}.`, schemaFor(name), () => ({ ok: null }), { version: "1.0.0" }));
}
for (let c = 0; c < CATALOGS; c++) registry.registerMcp({ namespace: `mcp${c}`, program: `/opt/mcp${c}/server` });
registry.freeze();
const registerMs = performance.now() - started;

const discovered = catalogs();
const tools = [];
for (let i = 0; i < SELECTED_NATIVES; i++) tools.push(`partner${(i * 20) % 100}.tool_${i * 20}`);
for (let c = 0; c < CATALOGS; c++) {
  for (let t = 0; t < SELECTED_PER_CATALOG; t++) tools.push(`mcp${c}.remote_tool_${t * 10}`);
}
const selection = { version: 3, tools };

const compiledBefore = compiledSchemaCount();
started = performance.now();
const cold = resolveSelection(registry, selection, discovered);
const coldMs = performance.now() - started;
const compiledCold = compiledSchemaCount() - compiledBefore;

function timeRuns(runs, catalogsFor, selectionFor = () => selection) {
  const times = [];
  let fingerprint;
  for (let i = 0; i < runs; i++) {
    const given = catalogsFor(i);
    const selected = selectionFor(i);
    const t0 = performance.now();
    fingerprint = resolveSelection(registry, selected, given).fingerprint;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], p95: times[Math.floor(times.length * 0.95)], fingerprint };
}

const warm = timeRuns(WARM_RUNS, () => discovered);
// A selection object never seen before: every name is looked up and checked again (the
// per-tool work is memoized), only the whole-result cache is bypassed.
const copies = Array.from({ length: WARM_RUNS }, () => ({ version: 3, tools: [...tools] }));
const uncached = timeRuns(
  WARM_RUNS,
  () => discovered,
  (i) => copies[i],
);
// Discovery that rebuilds equal catalog objects every turn: entries are re-fingerprinted, never recompiled.
const fresh = Array.from({ length: 10 }, () => catalogs());
const rediscovered = timeRuns(fresh.length, (i) => fresh[i]);
const compiledTotal = compiledSchemaCount() - compiledBefore;

const ms = (value) => `${value.toFixed(3)} ms`;
console.log(`registry: ${NATIVES} natives + ${CATALOGS} MCP providers registered in ${ms(registerMs)}`);
console.log(
  `selection: ${cold.tools.length} tools (${SELECTED_NATIVES} native, ${CATALOGS * SELECTED_PER_CATALOG} MCP from ${CATALOGS} catalogs of ${PER_CATALOG})`,
);
console.log(`cold resolution:  ${ms(coldMs)} (${compiledCold} schemas compiled)`);
console.log(`warm resolution:  median ${ms(warm.median)}, p95 ${ms(warm.p95)} over ${WARM_RUNS} runs (target < 5 ms)`);
console.log(`warm, new selection object (every name checked again): median ${ms(uncached.median)}, p95 ${ms(uncached.p95)}`);
console.log(`rediscovered catalogs (new objects, same content): median ${ms(rediscovered.median)}`);
console.log(`schemas compiled in total: ${compiledTotal} for ${cold.tools.length} distinct schemas (never twice: ${compiledTotal === cold.tools.length})`);
const stable = [warm, uncached, rediscovered].every((run) => run.fingerprint === cold.fingerprint);
console.log(`fingerprint stable across runs: ${stable}`);
