import { describe, expect, it } from "vitest";
import { assignSafeServerNames, McpBridge } from "../src/index.js";
import { fixture, marker, processesWithMarker } from "./helpers.js";

describe("MCP tool inventory (M5, I2)", () => {
  it("M5 answers undefined and starts nothing before any connection is bound", async () => {
    const tag = marker("inventory-none");
    const bridge = new McpBridge([{ transport: "stdio", namespace: "sh", program: fixture("sh-wrapper.sh"), args: [], env: { TEST_MARKER: tag } }]);
    bridge.openSession("idle");
    expect(bridge.inventory()).toBeUndefined();
    expect(bridge.inventory({ sessionId: "idle", serverNames: ["sh"] })).toBeUndefined();
    expect(processesWithMarker(tag)).toEqual([]);
    await bridge.dispose();
  });

  it("M5 lists bound catalogs with raw names, collision-safe server names and session denials kept apart", async () => {
    const providers = ["My-App", "my_app", "other"].map((namespace) => ({ transport: "stdio" as const, namespace, program: fixture("sh-wrapper.sh"), args: [] }));
    const bridge = new McpBridge(providers, { closeGraceMs: 500 });
    const session = bridge.openSession("bound");
    await session.discover(["My-App", "my_app"]);
    const inventory = bridge.inventory({ sessionId: "bound", sessionDeniedTools: { my_app: ["ping", "gone_tool"] } });
    expect(inventory?.version).toBe(1);
    expect(inventory?.servers).toEqual({
      "My-App": { serverName: "My-App", safeServerName: "my_app", launchSummary: "stdio: sh-wrapper.sh", toolCount: 1 },
      my_app: { serverName: "my_app", safeServerName: "my_app_2", launchSummary: "stdio: sh-wrapper.sh", toolCount: 2 },
    });
    expect(inventory?.tools).toEqual([
      { serverName: "My-App", safeServerName: "my_app", toolName: "ping", description: "Answers pong.", inputSchema: { type: "object" }, fallbackDescription: "Answers pong." },
    ]);
    expect(inventory?.sessionDeniedTools?.map((tool) => [tool.serverName, tool.toolName, tool.deniedBySession])).toEqual([
      ["my_app", "ping", true],
      ["my_app", "gone_tool", true],
    ]);
    // Bounded to the servers asked for; "other" was never bound.
    expect(bridge.inventory({ serverNames: ["other"] })).toBeUndefined();
    expect(Object.keys(bridge.inventory({ serverNames: ["my_app"] })?.servers ?? {})).toEqual(["my_app"]);
    expect(bridge.inventory({ sessionId: "unknown" })).toBeUndefined();
    await session.close();
    expect(bridge.inventory()).toBeUndefined();
    await bridge.dispose();
    await bridge.joinCleanup();
  });

  it("M5 assigns safe server names that never collide and never change raw names", () => {
    const names = assignSafeServerNames(["acer", "Acer", "a--b", "a__b", "x".repeat(60)]);
    expect(names.get("Acer")).toBe("acer");
    expect(names.get("acer")).toBe("acer_2");
    expect(names.get("a--b")).toBe("a_b");
    expect(names.get("a__b")).toBe("a_b_2");
    expect(names.get("x".repeat(60))).toHaveLength(32);
    expect(new Set(names.values()).size).toBe(5);
  });
});
