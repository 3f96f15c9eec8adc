import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { collect, FIXTURE_HOST, FIXTURES, REPO, tempDir, writeBundle } from "./helpers.js";

// What only running a session, serving or discovering needs: the runtime, the MCP bridge and
// SDK, SQLite, and the model SDKs. A command that does none of those must not load them.
const HEAVY = [
  /\/packages\/runtime\/dist\/index\./,
  /\/packages\/mcp-bridge\/dist\/index\./,
  /\/packages\/journal(-postgres)?\//,
  /\/packages\/model-/,
  /\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(@modelcontextprotocol|@ai-sdk|ai|openai|better-sqlite3|pg)\//,
];

const scratch = tempDir("startup");
afterAll(() => scratch.cleanup());

/** The modules a host entry loads for one command, as file paths relative to the repository. */
async function modulesLoadedBy(args: readonly string[], name: string): Promise<string[]> {
  const record = path.join(scratch.dir, `${name}.txt`);
  const child = spawn(process.execPath, ["--import", path.join(FIXTURES, "record-modules.mjs"), FIXTURE_HOST, ...args], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1", RECORD_MODULES: record },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ran = await collect(child);
  expect(ran.stderr).toBe("");
  expect(ran.code).toBe(0);
  return readFileSync(record, "utf8")
    .split("\n")
    .filter((url) => url.startsWith("file:"))
    .map((url) => path.relative(REPO, new URL(url).pathname));
}

describe("start-up", () => {
  it("--help loads neither the runtime, the MCP bridge and SDK, SQLite nor a model SDK", async () => {
    const loaded = await modulesLoadedBy(["--help"], "help");
    expect(loaded.some((file) => file.startsWith("packages/cli/dist/"))).toBe(true);
    expect(loaded.filter((file) => HEAVY.some((heavy) => heavy.test(`/${file}`)))).toEqual([]);
  });

  it("tools list --bundle loads neither the runtime, the MCP bridge and SDK, SQLite nor a model SDK", async () => {
    const bundle = writeBundle(path.join(scratch.dir, "bundle"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const loaded = await modulesLoadedBy(["tools", "list", "--bundle", bundle], "tools-list");
    expect(loaded.some((file) => file.startsWith("packages/bundle-resolver/dist/"))).toBe(true);
    expect(loaded.filter((file) => HEAVY.some((heavy) => heavy.test(`/${file}`)))).toEqual([]);
  });
});
