#!/usr/bin/env node
// `pnpm bench`: build, then run every package's benchmark one after another (never in
// parallel: they measure the machine). Each prints its own figures; nothing is asserted.
// `pnpm bench runtime journal` runs only the packages named. `pnpm soak` (`--soak`) runs
// the packages' `soak` scripts instead: long workloads that print what a round leaves.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1" };
const build = spawnSync(path.join(root, "node_modules", ".bin", "turbo"), ["run", "build", "--output-logs=errors-only"], { cwd: root, env, stdio: "inherit" });
if (build.status !== 0) process.exit(build.status ?? 1);

const script = process.argv.includes("--soak") ? "soak" : "bench";
const wanted = new Set(process.argv.slice(2).filter((argument) => argument !== "--soak"));
let failed = 0;
for (const name of readdirSync(path.join(root, "packages")).sort()) {
  const dir = path.join(root, "packages", name);
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  if (!manifest.scripts?.[script] || (wanted.size > 0 && !wanted.has(name))) continue;
  console.log(`\n== ${manifest.name}: ${manifest.scripts[script]}`);
  const run = spawnSync("pnpm", ["run", "--silent", script], { cwd: dir, env, stdio: "inherit" });
  if (run.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
