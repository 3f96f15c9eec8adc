#!/usr/bin/env node
// `pnpm test`: build every package (turbo), run every test once (one vitest run over
// the workspace), then print the plain summary line CI reads: `N passed, N failed, N skipped`.
// Exits non-zero when anything failed, including a test file that could not load.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1" };
const bin = (name) => path.join(root, "node_modules", ".bin", name);

const build = spawnSync(bin("turbo"), ["run", "build", "--output-logs=errors-only"], { cwd: root, env, stdio: "inherit" });
if (build.status !== 0) {
  console.log("0 passed, 1 failed");
  console.error("build failed: see the output above");
  process.exit(1);
}

const report = path.join(root, ".vitest-report.json");
rmSync(report, { force: true });
const extra = process.argv.slice(2);
const run = spawnSync(bin("vitest"), ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...extra], {
  cwd: root,
  env,
  stdio: "inherit",
});

if (!existsSync(report)) {
  console.log("0 passed, 1 failed");
  console.error(`vitest wrote no report (exit ${run.status}): see the output above`);
  process.exit(1);
}
const summary = JSON.parse(readFileSync(report, "utf8"));
const passed = summary.numPassedTests ?? 0;
const skipped = (summary.numPendingTests ?? 0) + (summary.numTodoTests ?? 0);
// A test file that fails to load has no failed tests of its own: count it as one failure.
const brokenFiles = (summary.testResults ?? []).filter(
  (file) => file.status === "failed" && (file.assertionResults ?? []).every((test) => test.status !== "failed"),
).length;
const failed = (summary.numFailedTests ?? 0) + brokenFiles;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 || run.status !== 0 || passed === 0 ? 1 : 0);
