import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { StdioProviderDefinition } from "@openworker/registry";
import { afterAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES, type McpBridgeOptions } from "../src/index.js";
import { fixture, marker, processesWithMarker } from "./helpers.js";

const tag = marker("start-failure");
const scratch = mkdtempSync(path.join(tmpdir(), "mcp-bridge-start-failure-"));
const token = "tok-3f9a1c77e2";

afterAll(() => {
  expect(processesWithMarker(tag)).toEqual([]);
  rmSync(scratch, { recursive: true, force: true });
});

/** Discovers one stdio provider that fails to start; answers its `unavailable` entry. */
async function failedStart(definition: Omit<StdioProviderDefinition, "namespace" | "transport">, options: McpBridgeOptions = {}) {
  const bridge = new McpBridge([{ ...definition, transport: "stdio", namespace: "parcels" }], { connectTimeoutMs: 10_000, closeGraceMs: 300, ...options });
  try {
    const { catalogs, unavailable } = await bridge.openSession("start").discover(["parcels"]);
    expect(catalogs).toEqual([]);
    expect(unavailable).toHaveLength(1);
    return unavailable[0]!;
  } finally {
    await bridge.dispose();
    await bridge.joinCleanup();
  }
}

describe("a stdio provider that fails to start says why (M1)", () => {
  it("M1 a provider that exits while starting carries its last stderr lines: node's Cannot find module", async () => {
    const missing = path.join(scratch, "parcels-server.mjs");
    const failure = await failedStart({ program: process.execPath, args: [missing], env: { TEST_MARKER: tag } });
    expect(failure.code).toBe(MCP_ERROR_CODES.connectFailed);
    expect(failure.message).toContain('MCP provider "parcels" initialize failed');
    expect(failure.message).toMatch(/; its last stderr lines: "[^"]*Error: Cannot find module /);
    expect(failure.message).toContain(`Cannot find module '${missing}'`);
    // Stack frames are left out.
    expect(failure.message).not.toMatch(/\bat Module\._/);
  });

  it("M1 E6 an SDK server's start failure keeps only the end of a long stderr, redacted, and onStderr still gets all of it", async () => {
    const received: string[] = [];
    const failure = await failedStart(
      { program: process.execPath, args: [fixture("fails-at-start.mjs")], env: { TEST_MARKER: tag, NOISE_LINES: "20000", START_TOKEN: token } },
      { onStderr: (namespace, text) => received.push(`${namespace}:${text.length}`) },
    );
    expect(failure.code).toBe(MCP_ERROR_CODES.connectFailed);
    expect(failure.message).toMatch(/process exited with code 3/);
    expect(failure.message).toContain('its last stderr lines: "starting…');
    expect(failure.message).toContain('\\nfatal: PARCELS_DB is not set (token [redacted] was given)"');
    expect(failure.message).not.toContain(token);
    expect(failure.message).not.toContain("fails-at-start.mjs:12:3");
    // Five lines of the last 2 KB, not the 2.4 MB the child wrote.
    expect(failure.message.split("\\n")).toHaveLength(5);
    expect(failure.message.length).toBeLessThan(2_000);
    const bytes = received.reduce((sum, entry) => sum + Number(entry.slice(entry.indexOf(":") + 1)), 0);
    expect(received.every((entry) => entry.startsWith("parcels:"))).toBe(true);
    expect(bytes).toBeGreaterThan(20_000 * 100);
  });

  it("M1 a provider that starts adds nothing; one that exits silently adds no stderr note", async () => {
    const bridge = new McpBridge(
      [
        {
          transport: "stdio",
          namespace: "parcels",
          program: process.execPath,
          args: [fixture("fails-at-start.mjs")],
          env: { TEST_MARKER: tag, PARCELS_DB: "db" },
        },
      ],
      { closeGraceMs: 300 },
    );
    const { catalogs } = await bridge.openSession("start").discover(["parcels"]);
    expect(catalogs.map((catalog) => catalog.tools.map((tool) => tool.name))).toEqual([["track"]]);
    await bridge.dispose();
    await bridge.joinCleanup();
    const silent = await failedStart({ program: process.execPath, args: ["-e", "process.exit(4)"], env: { TEST_MARKER: tag } });
    expect(silent.message).toMatch(/process exited with code 4/);
    expect(silent.message).not.toContain("stderr");
  });

  it("M1 a program that cannot be started is named as looked for, with the folder it was started in", async () => {
    const relative = await failedStart({ program: "bin/no-such-program", args: [], cwd: scratch });
    expect(relative.code).toBe(MCP_ERROR_CODES.spawnFailed);
    expect(relative.message).toContain(
      `could not start its program ${JSON.stringify(path.join(scratch, "bin/no-such-program"))} in folder ${JSON.stringify(scratch)} (ENOENT)`,
    );
    const bare = await failedStart({ program: "no-such-program-on-path", args: [], cwd: scratch });
    expect(bare.message).toContain(
      `could not start its program "no-such-program-on-path" (looked up on its PATH) in folder ${JSON.stringify(scratch)} (ENOENT)`,
    );
    const gone = path.join(scratch, "gone");
    const folder = await failedStart({ program: process.execPath, args: [], cwd: gone });
    expect(folder.code).toBe(MCP_ERROR_CODES.spawnFailed);
    expect(folder.message).toContain(`in folder ${JSON.stringify(gone)} (that folder does not exist) (ENOENT)`);
  });
});
