#!/usr/bin/env node
// `pnpm start`: the main job. Builds the workspace, then runs the example host on the
// sample coworker bundle (examples/coworker): one turn in which the model calls the three
// selected tools (one needs an approval, granted by the demo's approver), the transcript
// and every call's outcome, then a verification of the session's journal.
//
// Scripted model (default):  pnpm start
// A real model:              pnpm start --provider openai --base-url http://127.0.0.1:11434/v1 --model qwen2.5:7b [--api-key-env OPENAI_API_KEY]
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { drivesRealModel } from "./start-args.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1" };
const build = spawnSync(path.join(root, "node_modules", ".bin", "turbo"), ["run", "build", "--output-logs=errors-only"], {
  cwd: root,
  env,
  stdio: ["ignore", "ignore", "inherit"],
});
if (build.status !== 0) {
  console.error(`build failed (exit ${build.status ?? build.signal})`);
  process.exit(build.status || 1);
}

const host = path.join(root, "apps", "example-host", "dist", "host.js");
const bundle = path.join(root, "examples", "coworker");
const journal = path.join(root, ".openworker", "demo", "journal.db");
const extra = process.argv.slice(2);
const realModel = drivesRealModel(extra);
const sessionId = `ses_demo_${new Date().toISOString().replace(/[-:.]/g, "").replace("T", "_").slice(0, 15)}`;
const run = (args) => spawnSync(process.execPath, [host, ...args, "--journal", journal], { cwd: root, env, stdio: "inherit" });

console.log(`== ${path.relative(root, host)} run --bundle examples/coworker (${realModel ? "OpenAI-compatible model" : "scripted model"})`);
const turn = run([
  "run",
  "--bundle",
  bundle,
  ...(realModel ? [] : ["--script", path.join(bundle, "demo", "script.json")]),
  "--policy",
  path.join(bundle, "demo", "policy.json"),
  "--approve",
  "yes",
  "--session-id",
  sessionId,
  "--message",
  "Search the web for the Model Context Protocol, read my battery status, and send me a desktop notification when you are done.",
  ...extra,
]);
// A run refused before its session opened (a usage error, no model) has nothing to verify.
if (turn.status === 2) process.exit(2);
const verify = spawnSync(process.execPath, [host, "journal", "verify", sessionId, "--journal", journal], { cwd: root, env, encoding: "utf8" });
if (verify.status !== 0 && /CLI_SESSION_UNKNOWN|JOURNAL_NOT_FOUND/.test(verify.stderr)) {
  console.log("\n(no session was opened: the run stopped before it began, see the error above)");
  process.exit(turn.status || 1);
}
console.log(`\n== journal verify ${sessionId}`);
process.stdout.write(verify.stdout);
process.stderr.write(verify.stderr);
console.log(
  `\njournal: ${path.relative(root, journal)} (inspect: node ${path.relative(root, host)} journal show ${sessionId} --journal ${path.relative(root, journal)})`,
);
process.exit(turn.status !== 0 ? turn.status || 1 : verify.status || 0);
