#!/usr/bin/env node
// `pnpm start`: the main job. Builds the workspace, then runs the example host's demo
// when it exists; until then, runs the example partner tools through the SDK's testing
// kit and prints what they return.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1" };
const build = spawnSync(path.join(root, "node_modules", ".bin", "turbo"), ["run", "build", "--output-logs=errors-only"], {
  cwd: root,
  env,
  stdio: ["ignore", "ignore", "inherit"],
});
if (build.status !== 0) process.exit(build.status ?? 1);

const host = path.join(root, "apps", "example-host", "dist", "host.js");
if (existsSync(host)) {
  const demo = spawnSync(process.execPath, [host, "demo", ...process.argv.slice(2)], { cwd: root, env, stdio: "inherit" });
  process.exit(demo.status ?? 1);
}

const { runTool } = await import(path.join(root, "packages/tools-sdk/dist/testing.js"));
const exampleTools = await import(path.join(root, "examples/example-tools/dist/index.js"));
const notificationTools = await import(path.join(root, "examples/notification-tools/dist/index.js"));
const tools = [];
const registrar = { register: (tool) => tools.push(tool) };
exampleTools.register(registrar);
notificationTools.register(registrar);
const calls = {
  "example.web_search": { query: "model context protocol" },
  "notification.notify": { title: "OpenWorker", body: "The example tools ran." },
};
for (const tool of tools) {
  const { name } = tool.descriptor();
  const result = await runTool(tool, calls[name] ?? {});
  console.log(`${name}: ${result.outcome}`);
  console.log(`  ${result.outcome === "succeeded" ? result.output.text : `${result.error.code}: ${result.error.message}`}`);
}
