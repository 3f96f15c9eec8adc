// Cold start of `tools list --bundle examples/coworker` on the bundled example host,
// beside `node -e 0`, measured in the same run (alternating, so load affects both alike).
// Prints the medians and the ratio. Target: at most 4x. Needs `pnpm build` first.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const host = path.join(repo, "apps/example-host/dist/host.js");
const bundle = path.join(repo, "examples/coworker");
if (!existsSync(host)) {
  console.error(`missing ${host}: run \`pnpm build\` first`);
  process.exit(1);
}
const runs = Number(process.env.BENCH_RUNS ?? 15);

function time(args) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: repo, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return ms;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const baseline = [];
const list = [];
time(["-e", "0"]);
time([host, "tools", "list", "--bundle", bundle]);
for (let index = 0; index < runs; index++) {
  baseline.push(time(["-e", "0"]));
  list.push(time([host, "tools", "list", "--bundle", bundle]));
}
const node = median(baseline);
const cli = median(list);
console.log(`node -e 0                               median ${node.toFixed(1)} ms (${runs} runs)`);
console.log(`host.js tools list --bundle coworker    median ${cli.toFixed(1)} ms (${runs} runs)`);
console.log(`ratio                                   ${(cli / node).toFixed(2)}x (target <= 4x)`);
