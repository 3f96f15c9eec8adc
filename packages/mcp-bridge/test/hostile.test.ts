import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { McpProviderDefinition } from "@openworker/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIMITS } from "@openworker/tools-sdk";
import { McpBridge, MCP_ERROR_CODES } from "../src/index.js";
import { eventually, fixture, marker, processesWithMarker } from "./helpers.js";

const tag = marker("hostile");
const scratch = mkdtempSync(path.join(tmpdir(), "mcp-bridge-hostile-"));
const callLog = path.join(scratch, "calls.log");
const cancelLog = path.join(scratch, "cancel.log");

const node = (namespace: string, file: string, env: Record<string, string> = {}): McpProviderDefinition => ({
  transport: "stdio",
  namespace,
  program: process.execPath,
  args: [fixture(file)],
  env: { TEST_MARKER: tag, ...env },
});

const providers: McpProviderDefinition[] = [
  node("silent", "never-initialize.mjs"),
  node("garbage", "garbage-stdout.mjs"),
  node("crasher", "crash-mid-call.mjs", { CALL_LOG: callLog }),
  node("flood", "progress-flood.mjs", { CANCEL_LOG: cancelLog }),
  node("big", "big-catalog.mjs"),
  node("loop", "repeated-cursor.mjs"),
  node("dynamic", "list-changed.mjs"),
  node("malformed", "malformed-result.mjs"),
  { transport: "stdio", namespace: "missing", program: path.join(scratch, "no-such-program"), args: [] },
];

let bridge: McpBridge;

beforeAll(() => {
  bridge = new McpBridge(providers, { connectTimeoutMs: 5_000, closeGraceMs: 300 });
});

afterAll(async () => {
  await bridge.dispose();
  await bridge.joinCleanup();
  expect(processesWithMarker(tag)).toEqual([]);
  rmSync(scratch, { recursive: true, force: true });
});

describe("connections", () => {
  it("M2 a provider that never answers initialize times out alone; the others are discovered", async () => {
    const quick = new McpBridge(providers, { connectTimeoutMs: 2_000, closeGraceMs: 300 });
    const session = quick.openSession("slow-one");
    const result = await session.discover(["silent", "big", "missing", "nowhere"]);
    expect(result.catalogs.map((catalog) => catalog.namespace)).toEqual(["big"]);
    const codes = Object.fromEntries(result.unavailable.map((entry) => [entry.namespace, entry.code]));
    expect(codes).toEqual({ silent: MCP_ERROR_CODES.connectTimeout, missing: MCP_ERROR_CODES.spawnFailed, nowhere: MCP_ERROR_CODES.providerUnknown });
    expect(result.unavailable.find((entry) => entry.namespace === "silent")?.message).toContain(
      'MCP provider "silent" did not finish initialize within 2000 ms',
    );
    await quick.dispose();
    await quick.joinCleanup();
  });

  it("M4 ends the process of a provider whose connect timed out", async () => {
    const quick = new McpBridge([node("silent", "never-initialize.mjs", { TEST_MARKER: `${tag}-timeout` })], { connectTimeoutMs: 300, closeGraceMs: 300 });
    const session = quick.openSession("timeout");
    await session.discover(["silent"]);
    await session.joinCleanup();
    expect(processesWithMarker(`${tag}-timeout`)).toEqual([]);
    await quick.dispose();
  });

  it("M2 skips garbage lines on stdout and reports them as a diagnostic", async () => {
    // A small line bound, so that the long line is dropped too.
    const small = new McpBridge(providers, { closeGraceMs: 300, maxMessageBytes: 64 * 1024 });
    const session = small.openSession("garbage");
    const found = await session.discover(["garbage"]);
    expect(found.catalogs[0]?.tools.map((tool) => tool.name).sort()).toEqual(["huge-answer", "long-line", "noisy"]);
    const result = await session.callTool("garbage", "noisy", { text: "hi" }, {});
    expect(result.output?.text).toBe("clean: hi");
    const long = await session.callTool("garbage", "long-line", {}, {});
    expect(long.output?.text).toBe("after the long line");
    // E3: a response line over the bound is dropped, and its call fails at once as a size
    // breach (without the answer for its id it would wait out its 75 s bound, past this
    // test's timeout); the connection goes on working.
    const huge = await session.callTool("garbage", "huge-answer", {}, {});
    expect(huge).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "resultBytes" }, error: { code: "LIMIT_EXCEEDED" } });
    expect(huge.error?.message).toMatch(/bytes, over the 65536-byte message bound/);
    expect((await session.callTool("garbage", "noisy", { text: "still" }, {})).output?.text).toBe("clean: still");
    const again = await session.discover(["garbage"]);
    expect(again.diagnostics[0]?.message).toMatch(/skipped \d+ stdout line\(s\) that were not JSON-RPC messages/);
    await small.dispose();
    await small.joinCleanup();
  });
});

describe("calls", () => {
  it("M4/E4 a provider crashing mid-call fails that call as crashed, is not replayed, and restarts at the next discovery", async () => {
    const session = bridge.openSession("crash");
    await session.discover(["crasher"]);
    const before = await session.callTool("crasher", "ok", {}, {});
    const events: unknown[] = [];
    const crashed = await session.callTool("crasher", "crash", {}, { onProgress: (event) => events.push(event) });
    expect(crashed.outcome).toBe("crashed");
    expect(crashed.error?.code).toBe(MCP_ERROR_CODES.providerCrashed);
    expect(crashed.error?.message).toContain("exited with code 3");
    expect(crashed.error?.message).toContain("not replayed");
    expect(events).toEqual([{ progress: 1, total: 2, message: "about to crash" }]);

    const meanwhile = await session.callTool("crasher", "ok", {}, {});
    expect(meanwhile.error?.code).toBe(MCP_ERROR_CODES.providerUnavailable);

    const rediscovered = await session.discover(["crasher"]);
    expect(rediscovered.unavailable).toEqual([]);
    const after = await session.callTool("crasher", "ok", {}, {});
    expect(after.outcome).toBe("succeeded");
    expect(after.output?.text).not.toBe(before.output?.text); // a new process
    expect(readFileSync(callLog, "utf8").trim().split("\n")).toHaveLength(1);
    await session.close();
    await session.joinCleanup();
  });

  it("E2 E4 bounds a progress flood to 64 events and records the breaches; the call then ends as a limit breach", async () => {
    const session = bridge.openSession("flood");
    await session.discover(["flood"]);
    let seen = 0;
    const result = await session.callTool("flood", "flood", { count: 500 }, { onProgress: () => seen++ });
    expect(result).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "progressMessageBytes" }, error: { code: "LIMIT_EXCEEDED" } });
    expect(result.output).toBeDefined();
    expect(result.progress.accepted).toBe(64);
    expect(seen).toBe(64);
    expect(result.progress.dropped).toBe(500 - 64);
    expect(result.progress.breaches.map((breach) => breach.limit)).toContain("progressEvents");
    expect(result.progress.breaches.map((breach) => breach.limit)).toContain("progressMessageBytes");
    await session.close();
  });

  it("E4 cancellation sends notifications/cancelled to the server and settles the call at once", async () => {
    const session = bridge.openSession("cancel");
    await session.discover(["flood"]);
    const controller = new AbortController();
    const pending = session.callTool("flood", "hang", {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const result = await pending;
    expect(result.outcome).toBe("cancelled");
    const log = await eventually(() => {
      try {
        return readFileSync(cancelLog, "utf8") || undefined;
      } catch {
        return undefined;
      }
    });
    expect(log).toMatch(/^cancelled \d+/);
    await session.close();
  });

  it("E4 closing the session settles its in-flight calls as cancelled", async () => {
    const session = bridge.openSession("close-during-call");
    await session.discover(["flood"]);
    const pending = session.callTool("flood", "hang", {}, {});
    await new Promise((resolve) => setTimeout(resolve, 30));
    await session.close();
    const result = await pending;
    expect(result.outcome).toBe("cancelled");
    expect(result.error?.message).toContain("session closed");
    const late = await session.callTool("flood", "hang", {}, {});
    expect(late.error?.code).toBe(MCP_ERROR_CODES.sessionClosed);
    await expect(session.discover(["flood"])).rejects.toMatchObject({ code: MCP_ERROR_CODES.sessionClosed });
  });

  it("E3 turns isError into a failed call carrying the tool's text, and an oversized result into a breach", async () => {
    const session = bridge.openSession("errors");
    await session.discover(["flood"]);
    const failed = await session.callTool("flood", "fail", {}, {});
    expect(failed).toMatchObject({ outcome: "failed", error: { code: MCP_ERROR_CODES.toolError, message: "the printer is on fire" } });
    const big = await session.callTool("flood", "big", {}, {});
    expect(big.outcome).toBe("limit_exceeded");
    expect(big.breach?.limit).toBe("resultBytes");
    const array = await session.callTool("flood", "fail", [1, 2], {});
    expect(array.error?.code).toBe(MCP_ERROR_CODES.argumentsInvalid);
    const refused = await session.callTool("flood", "flood", { count: "many" }, {});
    expect(refused.outcome).toBe("failed");
    await session.close();
  });

  it("E3 a result that is not an MCP CallToolResult is a coded crash naming the tool; the connection stays usable", async () => {
    const session = bridge.openSession("malformed");
    await session.discover(["malformed"]);
    for (const name of ["content_not_array", "text_not_string", "image_not_base64", "unknown_block"]) {
      const result = await session.callTool("malformed", name, {}, {});
      expect(result.outcome, name).toBe("crashed");
      expect(result.error?.code, name).toBe(MCP_ERROR_CODES.resultInvalid);
      expect(result.error?.message, name).toContain(`MCP tool "${name}" of provider "malformed" returned a result that is not an MCP CallToolResult`);
      expect(result.output, name).toBeUndefined();
    }
    const good = await session.callTool("malformed", "good", {}, {});
    expect(good).toMatchObject({ outcome: "succeeded", output: { text: "no progress token" } });
    await session.close();
  });

  it("M7 structured content of any JSON value (an array) is the result's JSON, as MCP allows it", async () => {
    const session = bridge.openSession("structured-array");
    await session.discover(["malformed"]);
    const result = await session.callTool("malformed", "structured_array", {}, {});
    expect(result).toMatchObject({ outcome: "succeeded", output: { json: [1, 2, 3] } });
    await session.close();
  });

  it("E3 a result nesting deeper than the bound under huge keys fails MCP_RESULT_INVALID with a bounded message saying so", async () => {
    const session = bridge.openSession("deep-keys");
    await session.discover(["malformed"]);
    const result = await session.callTool("malformed", "deep_keys", {}, {});
    expect(result.outcome).toBe("crashed");
    expect(result.error?.code).toBe(MCP_ERROR_CODES.resultInvalid);
    const message = result.error?.message ?? "";
    // The problem is the depth, named first; the path of 100 KB keys is cut (it made a 13 MB message).
    expect(message).toContain(
      `MCP tool "deep_keys" of provider "malformed": the tool's result cannot be used: its structuredContent nests deeper than 128 levels (at /kkkk`,
    );
    expect(message).not.toContain("not JSON");
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(LIMITS.errorMessageBytes);
    await session.close();
  });

  it("E4 a JSON-RPC error answer of code -32000 is a failed call with the server's message, not a crash; the connection stays", async () => {
    const session = bridge.openSession("server-error");
    await session.discover(["malformed"]);
    const refused = await session.callTool("malformed", "server_error", {}, {});
    expect(refused).toMatchObject({
      outcome: "failed",
      error: { code: MCP_ERROR_CODES.requestFailed, message: expect.stringContaining("bad token: the service refused it") },
    });
    expect(await session.callTool("malformed", "good", {}, {})).toMatchObject({ outcome: "succeeded" });
    await session.close();
  });

  it("E1 an answer under the call's id sent back as a string settles the call (not at its time bound)", async () => {
    const session = bridge.openSession("string-id");
    await session.discover(["malformed"]);
    const answered = await session.callTool("malformed", "string_id", {}, { timeoutMs: 20_000 });
    expect(answered).toMatchObject({ outcome: "succeeded", output: { text: "answered with a string id" } });
    await session.close();
  });

  it("E2 asks the server for progress only when the caller listens", async () => {
    const session = bridge.openSession("progress-token");
    await session.discover(["malformed"]);
    const silent = await session.callTool("malformed", "good", {}, {});
    expect(silent.output?.text).toBe("no progress token");
    const listening = await session.callTool("malformed", "good", {}, { onProgress: () => {} });
    expect(listening.output?.text).toBe("progress token");
    await session.close();
  });
});

describe("catalogs", () => {
  it("M2 discovers a 5,000-tool catalog over five pages", async () => {
    const session = bridge.openSession("big");
    const { catalogs } = await session.discover(["big"]);
    expect(catalogs[0]?.tools).toHaveLength(5000);
    expect(catalogs[0]?.tools[4999]?.name).toBe("tool_04998");
    await session.close();
  });

  it("M2 a catalog of 15 pages is listed without a MaxListenersExceededWarning reaching the host", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    const paged = new McpBridge([node("paged", "big-catalog.mjs", { TOOL_COUNT: "30", PAGE_SIZE: "2" })], { closeGraceMs: 300 });
    try {
      const session = paged.openSession("paged");
      for (let round = 0; round < 2; round++) {
        const { catalogs } = await session.discover(["paged"]);
        expect(catalogs[0]?.tools).toHaveLength(30);
      }
      // Node emits its warnings on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.includes("MaxListenersExceeded"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await paged.dispose();
      await paged.joinCleanup();
    }
  });

  it("M2 bounds catalogs: too many tools or pages make the provider unavailable", async () => {
    const bounded = new McpBridge(providers, { maxCatalogTools: 1000, closeGraceMs: 300 });
    const tools = await bounded.openSession("tools").discover(["big"]);
    expect(tools.unavailable[0]?.code).toBe(MCP_ERROR_CODES.catalogTooLarge);
    expect(tools.unavailable[0]?.message).toContain("more than 1000 tools");
    const paged = new McpBridge(providers, { maxCatalogPages: 2, closeGraceMs: 300 });
    const pages = await paged.openSession("pages").discover(["big"]);
    expect(pages.unavailable[0]?.message).toContain("more than 2 pages");
    await Promise.all([bounded.dispose(), paged.dispose()]);
    await Promise.all([bounded.joinCleanup(), paged.joinCleanup()]);
  });

  it("M2 bounds the bytes of a catalog: 8 tools of 3 MiB each pass the page and tool bounds but not the 16 MiB default", async () => {
    const fat = new McpBridge([node("fat", "fat-catalog.mjs")], { closeGraceMs: 300 });
    try {
      const session = fat.openSession("fat");
      const { catalogs, unavailable } = await session.discover(["fat"]);
      expect(catalogs).toEqual([]);
      expect(unavailable[0]?.code).toBe(MCP_ERROR_CODES.catalogTooLarge);
      expect(unavailable[0]?.message).toContain(`more than ${16 * 1024 * 1024} bytes of tool definitions`);
      expect(unavailable[0]?.message).toContain("maxCatalogBytes");
      // Configurable beside the other catalog bounds.
      const roomy = new McpBridge([node("fat", "fat-catalog.mjs")], { closeGraceMs: 300, maxCatalogBytes: 32 * 1024 * 1024 });
      const found = await roomy.openSession("roomy").discover(["fat"]);
      expect(found.catalogs[0]?.tools).toHaveLength(8);
      await roomy.dispose();
      await roomy.joinCleanup();
    } finally {
      await fat.dispose();
      await fat.joinCleanup();
    }
  });

  it("M2 a repeated pagination cursor is an error naming the provider", async () => {
    const session = bridge.openSession("loop");
    const result = await session.discover(["loop", "dynamic"]);
    expect(result.unavailable).toEqual([
      {
        namespace: "loop",
        code: MCP_ERROR_CODES.cursorRepeated,
        message: expect.stringContaining('MCP provider "loop" repeated the pagination cursor "same-cursor" on page 3'),
      },
    ]);
    expect(result.catalogs.map((catalog) => catalog.namespace)).toEqual(["dynamic"]);
    const call = await session.callTool("loop", "tool_1", {}, {});
    expect(call.error?.code).toBe(MCP_ERROR_CODES.toolNotPublished);
    await session.close();
  });

  it("M3 list_changed: the next discovery sees added and changed tools and names them", async () => {
    const session = bridge.openSession("dynamic");
    const first = await session.discover(["dynamic"]);
    expect(first.catalogs[0]?.changedTools).toEqual(["stable", "target", "add", "redescribe"]);
    const unchanged = await session.discover(["dynamic"]);
    expect(unchanged.catalogs[0]).toMatchObject({ fromCache: true, changedTools: [], fingerprint: first.catalogs[0]?.fingerprint });

    expect((await session.callTool("dynamic", "fresh", {}, {})).error?.code).toBe(MCP_ERROR_CODES.toolNotPublished);
    await session.callTool("dynamic", "add", { name: "fresh" }, {});
    await session.callTool("dynamic", "redescribe", {}, {});
    const changed = await session.discover(["dynamic"]);
    expect(changed.catalogs[0]?.fromCache).toBe(false);
    expect([...(changed.catalogs[0]?.changedTools ?? [])].sort()).toEqual(["fresh", "target"]);
    expect(changed.catalogs[0]?.fingerprint).not.toBe(first.catalogs[0]?.fingerprint);
    const target = (catalog: typeof first) => catalog.catalogs[0]?.tools.find((tool) => tool.name === "target")?.fingerprint;
    expect(target(changed)).not.toBe(target(first));
    expect((await session.callTool("dynamic", "fresh", {}, {})).outcome).toBe("succeeded");
    await session.close();
  });
});
