import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES, type McpSession } from "../src/index.js";
import { everythingEntry, marker, processesWithMarker } from "./helpers.js";

const tag = marker("everything");
let bridge: McpBridge;
let session: McpSession;
let first: Awaited<ReturnType<McpSession["discover"]>>;

beforeAll(async () => {
  process.env.OPENWORKER_TEST_PARENT_SECRET = "parent-secret-value";
  bridge = new McpBridge(
    [
      {
        transport: "stdio",
        namespace: "everything",
        program: process.execPath,
        args: [everythingEntry, "stdio"],
        env: { TEST_MARKER: tag, FROM_CONFIG: "configured" },
      },
    ],
    { closeGraceMs: 500 },
  );
  session = bridge.openSession("everything-session");
  first = await session.discover(["everything"]);
  expect(first.unavailable).toEqual([]);
});

afterAll(async () => {
  delete process.env.OPENWORKER_TEST_PARENT_SECRET;
  await bridge.dispose();
  await bridge.joinCleanup();
});

describe("server-everything over stdio", () => {
  it("M3 honours the list_changed it sends after initialize: the next discovery re-lists, later ones reuse", async () => {
    // Its conditional tools are registered once client capabilities are known, with a
    // tools/list_changed notification that arrives while the first listing runs.
    expect(first.catalogs[0]?.changedTools.length).toBe(first.catalogs[0]?.tools.length);
    const second = await session.discover(["everything"]);
    expect(second.catalogs[0]?.fromCache).toBe(false);
    expect(second.catalogs[0]?.tools.some((tool) => tool.name === "simulate-research-query")).toBe(true);
    expect(second.catalogs[0]?.changedTools).toEqual([]);
    const third = await session.discover(["everything"]);
    expect(third.catalogs[0]?.fromCache).toBe(true);
    expect(third.catalogs[0]?.fingerprint).toBe(second.catalogs[0]?.fingerprint);
  });

  it("M2 discovers its catalog with a fingerprint per tool", async () => {
    const { catalogs } = await session.discover(["everything"]);
    const catalog = catalogs[0];
    expect(catalog?.namespace).toBe("everything");
    const echo = catalog?.tools.find((tool) => tool.name === "echo");
    expect(echo?.inputSchema).toMatchObject({ type: "object" });
    expect(echo?.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(new Set(catalog?.tools.map((tool) => tool.fingerprint)).size).toBe(catalog?.tools.length);
  });

  it("E3 echoes text as the model text and as content JSON", async () => {
    const result = await session.callTool("everything", "echo", { message: "hello" }, {});
    expect(result.outcome).toBe("succeeded");
    expect(result.output?.text).toBe("Echo: hello");
    expect(result.output?.json).toEqual({ content: [{ type: "text", text: "Echo: hello" }] });
  });

  it("T4 moves its tiny image out of the JSON as decoded PNG bytes", async () => {
    const result = await session.callTool("everything", "get-tiny-image", {}, {});
    expect(result.outcome).toBe("succeeded");
    const image = result.output?.images[0];
    expect(image?.mimeType).toBe("image/png");
    expect([...(image?.data.subarray(0, 8) ?? [])]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const json = JSON.stringify(result.output?.json);
    expect(json).not.toContain("iVBORw0KGgo");
    expect(result.output?.json).toMatchObject({ content: [{ type: "text" }, { type: "image", mimeType: "image/png", image: 0 }, { type: "text" }] });
  });

  it("E3 keeps resource links as objects", async () => {
    const result = await session.callTool("everything", "get-resource-links", { count: 2 }, {});
    expect(result.outcome).toBe("succeeded");
    expect(result.output?.json).toMatchObject({ content: [{ type: "text" }, { type: "resource_link", uri: expect.any(String) }, { type: "resource_link" }] });
  });

  it("E3 gives the model an embedded text resource's text, under a line naming it, and a line per resource link", async () => {
    const reference = await session.callTool("everything", "get-resource-reference", { resourceType: "Text", resourceId: 1 }, {});
    expect(reference.outcome).toBe("succeeded");
    const embedded = (reference.output!.json as { content: { type: string; resource?: { uri: string; text: string } }[] }).content.find(
      (block) => block.type === "resource",
    )!;
    expect(reference.output?.text).toContain(`[resource <${embedded.resource!.uri}>`);
    expect(reference.output?.text).toContain(embedded.resource!.text);
    const links = await session.callTool("everything", "get-resource-links", { count: 2 }, {});
    expect(links.output?.text.match(/^\[resource link .*<.+>/gm)).toHaveLength(2);
  });

  it("E3 uses structuredContent as the JSON when present", async () => {
    const result = await session.callTool("everything", "get-structured-content", { location: "New York" }, {});
    expect(result.outcome).toBe("succeeded");
    expect(result.output?.json).toMatchObject({ temperature: 33, conditions: "Cloudy" });
  });

  it("E2 maps its long-running operation's progress to bounded progress events", async () => {
    const events: unknown[] = [];
    const result = await session.callTool(
      "everything",
      "trigger-long-running-operation",
      { duration: 0.2, steps: 4 },
      { onProgress: (event) => events.push(event) },
    );
    expect(result.outcome).toBe("succeeded");
    expect(events).toEqual([1, 2, 3, 4].map((progress) => ({ progress, total: 4 })));
    expect(result.progress.accepted).toBe(4);
  });

  it("E1 times the long-running operation out and settles without waiting for it", async () => {
    const result = await session.callTool("everything", "trigger-long-running-operation", { duration: 30, steps: 3 }, { timeoutMs: 200 });
    expect(result.outcome).toBe("timed_out");
    expect(result.error?.code).toBe("TOOL_TIMEOUT");
    // The connection survives: the next call works.
    expect((await session.callTool("everything", "echo", { message: "after" }, {})).outcome).toBe("succeeded");
  });

  it("E4 settles a cancelled call at once although the server ignores the cancellation", async () => {
    const controller = new AbortController();
    const pending = session.callTool("everything", "trigger-long-running-operation", { duration: 30, steps: 3 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const result = await pending;
    expect(result.outcome).toBe("cancelled");
    expect(result.error?.code).toBe("TOOL_CANCELLED");
  });

  it("E6 starts the child with the safe base environment plus the provider's env only", async () => {
    const result = await session.callTool("everything", "get-env", {}, {});
    expect(result.outcome).toBe("succeeded");
    const env = JSON.parse(result.output?.text ?? "{}") as Record<string, string>;
    expect(env.FROM_CONFIG).toBe("configured");
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.OPENWORKER_TEST_PARENT_SECRET).toBeUndefined();
  });

  it("M2 fails a call for a tool the catalog does not publish before sending it", async () => {
    const result = await session.callTool("everything", "no-such-tool", {}, {});
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe(MCP_ERROR_CODES.toolNotPublished);
    expect(result.error?.message).toContain('does not publish "no-such-tool"');
    expect(result.error?.message).toContain("echo");
  });

  it("M4 leaves no process of the server once the session closes", async () => {
    const other = bridge.openSession("everything-close");
    await other.discover(["everything"]);
    expect(processesWithMarker(tag).length).toBeGreaterThanOrEqual(2);
    await other.close();
    await other.joinCleanup();
    // Only the shared session's server is left.
    expect(processesWithMarker(tag).length).toBe(1);
  });
});
