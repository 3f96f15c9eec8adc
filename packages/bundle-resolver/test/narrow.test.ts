import { describe, expect, it } from "vitest";
import { withoutProviders } from "../src/index.js";

describe("withoutProviders", () => {
  it("M2 N7 drops only the tools of the given providers, for every bundle version", () => {
    const down = new Set(["acer"]);
    expect(withoutProviders({ version: 3, tools: ["example.web_search", "acer.battery", "acer.fan"] }, down)).toEqual({
      version: 3,
      tools: ["example.web_search"],
    });
    expect(withoutProviders({ version: 2, mcpServers: { acer: ["battery"], other: ["x"] } }, down)).toEqual({ version: 2, mcpServers: { other: ["x"] } });
    expect(withoutProviders({ version: 1, mcpServers: ["acer", "other"] }, down)).toEqual({ version: 1, mcpServers: ["other"] });
    const same = { version: 3, tools: ["acer.battery"] } as const;
    expect(withoutProviders(same, new Set())).toBe(same);
  });
});
