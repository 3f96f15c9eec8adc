import fc from "fast-check";
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

  it("M5 M6 lists bound catalogs with raw names, collision-safe server names, the negotiated revision and session denials kept apart", async () => {
    const providers = ["My-App", "my_app", "other"].map((namespace) => ({
      transport: "stdio" as const,
      namespace,
      program: fixture("sh-wrapper.sh"),
      args: [],
    }));
    const bridge = new McpBridge(providers, { closeGraceMs: 500 });
    const session = bridge.openSession("bound");
    await session.discover(["My-App", "my_app"]);
    const inventory = bridge.inventory({ sessionId: "bound", sessionDeniedTools: { my_app: ["ping", "gone_tool"] } });
    expect(inventory?.version).toBe(1);
    expect(inventory?.servers).toEqual({
      "My-App": { serverName: "My-App", safeServerName: "my_app", launchSummary: "stdio: sh-wrapper.sh", toolCount: 1, protocolVersion: "2025-06-18" },
      my_app: { serverName: "my_app", safeServerName: "my_app_2", launchSummary: "stdio: sh-wrapper.sh", toolCount: 2, protocolVersion: "2025-06-18" },
    });
    expect(inventory?.tools).toEqual([
      {
        serverName: "My-App",
        safeServerName: "my_app",
        toolName: "ping",
        description: "Answers pong.",
        inputSchema: { type: "object" },
        fallbackDescription: "Answers pong.",
      },
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

  it("M5 never gives a safe server name a doubled or trailing underscore where the 32-character cut falls on one", () => {
    const a29 = "a".repeat(29);
    const a31 = "a".repeat(31);
    const table: [string[], Record<string, string>][] = [
      // The cut for "_2" falls on the "_" of "_bc": it used to give "aaa…a__2".
      [[`${a29}_bc`, `${"A".repeat(29)}_bc`], { [`${"A".repeat(29)}_bc`]: `${a29}_bc`, [`${a29}_bc`]: `${a29}_2` }],
      // The 32-character cut itself ends on "_": it used to keep it ("aaa…a_").
      [[`${a31}_b`], { [`${a31}_b`]: a31 }],
      [[`${a31}_b`, `${a31}_c`], { [`${a31}_b`]: a31, [`${a31}_c`]: `${"a".repeat(30)}_2` }],
    ];
    for (const [raw, expected] of table) expect(Object.fromEntries(assignSafeServerNames(raw))).toEqual(expected);
    // Twelve spellings of one name: from "_10" on the cut falls on the "_" of "_bcd".
    const spellings = Array.from(
      { length: 12 },
      (_, index) => `${"a".repeat(24)}${[...index.toString(2).padStart(4, "0")].map((bit) => (bit === "1" ? "A" : "a")).join("")}_bcd`,
    );
    const a28 = "a".repeat(28);
    expect(new Set(assignSafeServerNames(spellings).values())).toEqual(
      new Set([`${a28}_bcd`, ...[2, 3, 4, 5, 6, 7, 8, 9].map((suffix) => `${a28}_b_${suffix}`), `${a28}_10`, `${a28}_11`, `${a28}_12`]),
    );
  });

  it("M5 safe server names keep their promise for any raw names (property)", () => {
    // Few letters and many separators, so that collisions are common; and names near the
    // 32-character cut that differ in letter case only, so that cuts on "_" are too.
    const unit = fc.constantFrom("a", "A", "b", "1", "_", "-", ".", "é");
    const nearCut = fc.tuple(fc.integer({ min: 24, max: 34 }), fc.string({ unit, maxLength: 8 })).map(([length, tail]) => `${"a".repeat(length)}${tail}`);
    const rawName = fc.oneof(
      fc.string({ unit, maxLength: 70 }),
      nearCut,
      nearCut.map((name) => name.toUpperCase()),
    );
    fc.assert(
      fc.property(fc.array(rawName, { maxLength: 25 }), (raw) => {
        const names = assignSafeServerNames(raw);
        expect([...names.keys()].sort()).toEqual([...new Set(raw)].sort());
        for (const safe of names.values()) {
          expect(safe).toMatch(/^[a-z0-9]+(?:_[a-z0-9]+)*$/);
          expect(safe.length).toBeLessThanOrEqual(32);
        }
        expect(new Set(names.values()).size).toBe(names.size);
      }),
      { numRuns: 2_000 },
    );
  });
});
