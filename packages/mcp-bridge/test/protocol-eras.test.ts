import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpProviderDefinition } from "@openworker/registry";
import { McpBridge } from "../src/index.js";
import { eventually, fixture, marker, processesWithMarker } from "./helpers.js";
import { PIXEL } from "./fixtures/modern-tools.mjs";

const scratch = mkdtempSync(path.join(tmpdir(), "mcp-eras-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const stdio = (namespace: string, script: string, env: Record<string, string> = {}): McpProviderDefinition => ({
  transport: "stdio",
  namespace,
  program: process.execPath,
  args: [fixture(script)],
  env,
});

describe("a stdio server that speaks only 2026-07-28", () => {
  const tag = marker("modern");
  const cancelLog = path.join(scratch, "cancelled.log");
  let bridge: McpBridge;
  beforeAll(() => {
    bridge = new McpBridge([stdio("modern", "modern-only.mjs", { TEST_MARKER: tag, CANCEL_LOG: cancelLog })], { closeGraceMs: 500 });
  });
  afterAll(async () => {
    await bridge.dispose();
    await bridge.joinCleanup();
  });

  it("M6 is discovered and called on 2026-07-28; its image travels as an image, not as text or JSON (M7)", async () => {
    const session = bridge.openSession("modern-calls");
    const { catalogs, unavailable } = await session.discover(["modern"]);
    expect(unavailable).toEqual([]);
    expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["echo", "add_tool", "picture", "slow", "confirm", "chatty"]);
    expect(catalogs[0]?.protocolVersion).toBe("2026-07-28");
    expect(bridge.inventory()?.servers.modern?.protocolVersion).toBe("2026-07-28");
    expect(await session.callTool("modern", "echo", { text: "hi" }, {})).toMatchObject({ outcome: "succeeded", output: { text: "echo: hi" } });
    const picture = await session.callTool("modern", "picture", {}, {});
    expect(picture.outcome).toBe("succeeded");
    expect(picture.output?.images?.[0]).toMatchObject({ mimeType: "image/png" });
    expect(picture.output?.text).not.toContain(PIXEL);
    expect(JSON.stringify(picture.output?.json)).not.toContain(PIXEL);
    await session.close();
  });

  it("M6 a call the server answers input_required fails as refused, naming the tool: the bridge offers no elicitation", async () => {
    const session = bridge.openSession("modern-input");
    await session.discover(["modern"]);
    const result = await session.callTool("modern", "confirm", {}, {});
    expect(result.outcome).toBe("failed");
    expect(result.error?.message).toContain('MCP tool "confirm" of provider "modern" was refused by the provider');
    expect((await session.callTool("modern", "echo", { text: "after" }, {})).outcome).toBe("succeeded");
    await session.close();
  });

  it("M6 E2 progress of a 2026-07-28 call reaches the caller", async () => {
    const session = bridge.openSession("modern-progress");
    await session.discover(["modern"]);
    const events: unknown[] = [];
    const result = await session.callTool("modern", "slow", { ms: 10 }, { onProgress: (event) => events.push(event) });
    expect(result).toMatchObject({ outcome: "succeeded", output: { text: "slept 10" } });
    expect(events).toEqual([expect.objectContaining({ progress: 1, total: 2, message: "started" })]);
    await session.close();
  });

  it("M6 E1 E4 a 2026-07-28 call past its bound times out, one cancelled settles at once, and the server is told both times", async () => {
    const session = bridge.openSession("modern-bounds");
    await session.discover(["modern"]);
    const timedOut = await session.callTool("modern", "slow", { ms: 30_000 }, { timeoutMs: 300 });
    expect(timedOut.outcome).toBe("timed_out");
    const controller = new AbortController();
    const pending = session.callTool("modern", "slow", { ms: 30_000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect((await pending).outcome).toBe("cancelled");
    await eventually(() => (readFileSync(cancelLog, "utf8").split("\n").filter(Boolean).length === 2 ? true : undefined));
    // The connection goes on.
    expect((await session.callTool("modern", "echo", { text: "after" }, {})).outcome).toBe("succeeded");
    await session.close();
  });

  it("M6 M3 a change announced on its subscriptions/listen stream makes the next discovery list again; later ones reuse the listing", async () => {
    const session = bridge.openSession("modern-changes");
    const first = await session.discover(["modern"]);
    const reused = await session.discover(["modern"]);
    expect(reused.catalogs[0]?.fromCache).toBe(true);
    expect((await session.callTool("modern", "add_tool", {}, {})).outcome).toBe("succeeded");
    // The notification travels on its own stream: the next discovery after it lists again.
    const changed = await eventually(async () => {
      const next = await session.discover(["modern"]);
      return next.catalogs[0]?.fromCache === false ? next : undefined;
    });
    expect(changed.catalogs[0]?.changedTools).toEqual(["extra"]);
    expect(changed.catalogs[0]?.fingerprint).not.toBe(first.catalogs[0]?.fingerprint);
    expect((await session.discover(["modern"])).catalogs[0]?.fromCache).toBe(true);
    expect(await session.callTool("modern", "extra", {}, {})).toMatchObject({ outcome: "succeeded", output: { text: "extra" } });
    await session.close();
  });

  it("M6 M4 closing the session ends the 2026-07-28 server's process, verified", async () => {
    const session = bridge.openSession("modern-close");
    await session.discover(["modern"]);
    expect(processesWithMarker(tag).length).toBeGreaterThan(0);
    await session.close();
    await bridge.joinCleanup();
    expect(processesWithMarker(tag)).toEqual([]);
  });
});

describe("a streamable-HTTP service that speaks only 2026-07-28", () => {
  let service: ChildProcess;
  let bridge: McpBridge;
  beforeAll(async () => {
    service = spawn(process.execPath, [fixture("modern-http.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
    const url = await new Promise<string>((resolve) => createInterface({ input: service.stdout! }).once("line", resolve));
    bridge = new McpBridge([{ transport: "streamable_http", namespace: "remote", url }]);
  });
  afterAll(async () => {
    await bridge.dispose();
    await bridge.joinCleanup();
    service.kill();
  });

  it("M6 is discovered and called over HTTP on 2026-07-28, and a call past its bound is timed out", async () => {
    const session = bridge.openSession("http-modern");
    const { catalogs, unavailable } = await session.discover(["remote"]);
    expect(unavailable).toEqual([]);
    expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["echo", "add_tool", "picture", "slow", "confirm", "chatty"]);
    expect(catalogs[0]?.protocolVersion).toBe("2026-07-28");
    expect(await session.callTool("remote", "echo", { text: "over http" }, {})).toMatchObject({ outcome: "succeeded", output: { text: "echo: over http" } });
    expect((await session.callTool("remote", "slow", { ms: 30_000 }, { timeoutMs: 300 })).outcome).toBe("timed_out");
    await session.close();
  });

  it("M6 M3 a change published on the service's subscriptions/listen streams makes the next discovery list again", async () => {
    const session = bridge.openSession("http-modern-changes");
    await session.discover(["remote"]);
    expect((await session.discover(["remote"])).catalogs[0]?.fromCache).toBe(true);
    await session.callTool("remote", "add_tool", {}, {});
    const changed = await eventually(async () => {
      const next = await session.discover(["remote"]);
      return next.catalogs[0]?.fromCache === false ? next : undefined;
    });
    expect(changed.catalogs[0]?.tools.map((tool) => tool.name)).toContain("extra");
    await session.close();
  });
});

describe("2025-era servers", () => {
  it("M6 a server written with SDK 1.32.2 is reached with initialize (2025-11-25) and called", async () => {
    const bridge = new McpBridge([stdio("legacy", "output-schema.mjs")]);
    const session = bridge.openSession("legacy");
    const { catalogs, unavailable } = await session.discover(["legacy"]);
    expect(unavailable).toEqual([]);
    expect(catalogs[0]?.tools.length).toBeGreaterThan(0);
    expect(catalogs[0]?.protocolVersion).toBe("2025-11-25");
    await session.close();
    await bridge.dispose();
    await bridge.joinCleanup();
  });

  for (const version of ["2025-06-18", "2025-03-26"]) {
    it(`M6 a server that speaks only ${version} is negotiated down to it and called`, async () => {
      const log = path.join(scratch, `methods-${version}.log`);
      const bridge = new McpBridge([stdio("older", "older-revision.mjs", { PROTOCOL_VERSION: version, METHOD_LOG: log })]);
      const session = bridge.openSession(`older-${version}`);
      const { catalogs, unavailable } = await session.discover(["older"]);
      expect(unavailable).toEqual([]);
      expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["hello"]);
      expect(catalogs[0]?.protocolVersion).toBe(version);
      expect(await session.callTool("older", "hello", {}, {})).toMatchObject({ outcome: "succeeded", output: { text: `hello from ${version}` } });
      expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toEqual([
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
      ]);
      await session.close();
      await bridge.dispose();
      await bridge.joinCleanup();
    });
  }

  it("M6 M4 a server that exits on the protocol probe is started once more for initialize, and not probed again", async () => {
    const log = path.join(scratch, "starts.log");
    const bridge = new McpBridge([stdio("strict", "older-revision.mjs", { PROTOCOL_VERSION: "2025-11-25", EXIT_ON_PROBE: "1", METHOD_LOG: log })]);
    const first = bridge.openSession("strict-1");
    expect((await first.discover(["strict"])).unavailable).toEqual([]);
    expect(await first.callTool("strict", "hello", {}, {})).toMatchObject({ outcome: "succeeded" });
    await first.close();
    const second = bridge.openSession("strict-2");
    expect((await second.discover(["strict"])).unavailable).toEqual([]);
    await second.close();
    await bridge.dispose();
    await bridge.joinCleanup();
    const methods = readFileSync(log, "utf8").split("\n").filter(Boolean);
    expect(methods.filter((method) => method === "server/discover")).toHaveLength(1);
    expect(methods.filter((method) => method === "initialize")).toHaveLength(2);
  });
});
