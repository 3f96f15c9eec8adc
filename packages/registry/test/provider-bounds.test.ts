import path from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_PROVIDER_BOUND_MS, parseServersFile, ToolRegistry } from "../src/index.js";
import { thrown } from "./helpers.js";

const FILE = path.join("/app", "servers.json");
const parse = (document: unknown) => parseServersFile(JSON.stringify(document), FILE);

describe("a provider's own connect and call bounds (M10)", () => {
  it("M1 M10 registerMcp and registerMcpHttp keep connectTimeoutMs and callTimeoutMs", () => {
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "big", program: "npx", args: ["-y", "server"], connectTimeoutMs: 60_000, callTimeoutMs: MAX_PROVIDER_BOUND_MS });
    registry.registerMcpHttp({ namespace: "wiki", url: "http://127.0.0.1:8123/mcp", connectTimeoutMs: 2_000 });
    registry.registerMcp({ namespace: "plain", program: "/bin/server" });
    expect(registry.provider("big")).toMatchObject({ connectTimeoutMs: 60_000, callTimeoutMs: 3_600_000 });
    expect(registry.provider("wiki")).toMatchObject({ connectTimeoutMs: 2_000 });
    // Absent, the bridge's defaults apply: nothing is filled in.
    expect(Object.keys(registry.provider("plain")!)).not.toContain("connectTimeoutMs");
  });

  it("M1 M10 servers.json takes both bounds in its own shape and in the mcpServers shape", () => {
    expect(
      parse({
        servers: {
          big: { transport: "stdio", command: "npx", args: ["-y", "server"], connectTimeoutMs: 30_000, callTimeoutMs: 600_000 },
          wiki: { transport: "streamable_http", url: "http://127.0.0.1:8123/mcp", connectTimeoutMs: 2_000 },
        },
      }),
    ).toEqual([
      { transport: "stdio", namespace: "big", program: "npx", args: ["-y", "server"], connectTimeoutMs: 30_000, callTimeoutMs: 600_000 },
      { transport: "streamable_http", namespace: "wiki", url: "http://127.0.0.1:8123/mcp", connectTimeoutMs: 2_000 },
    ]);
    expect(
      parse({
        mcpServers: {
          big: { command: "npx", args: ["-y", "server"], connectTimeoutMs: 30_000 },
          wiki: { type: "http", url: "http://127.0.0.1:1/mcp", callTimeoutMs: 5_000 },
        },
      }),
    ).toEqual([
      { transport: "stdio", namespace: "big", program: "npx", args: ["-y", "server"], connectTimeoutMs: 30_000 },
      { transport: "streamable_http", namespace: "wiki", url: "http://127.0.0.1:1/mcp", callTimeoutMs: 5_000 },
    ]);
  });

  it.each([0, -1, 1.5, 3_600_001, "10000", null, Number.NaN])(
    "M10 servers.json refuses connectTimeoutMs %s, naming the file, the server and the field",
    (value) => {
      const error = thrown(() => parse({ servers: { big: { transport: "stdio", command: "npx", connectTimeoutMs: value } } }));
      expect(error.code).toBe("PROVIDER_INVALID");
      expect(error.message).toMatch(
        /^\/app\/servers\.json: server "big": field "connectTimeoutMs" must be a whole number of milliseconds from 1 to 3600000 \(one hour\), got /,
      );
    },
  );

  it("M10 registerMcp refuses a callTimeoutMs over one hour, naming the provider and the field", () => {
    const error = thrown(() => new ToolRegistry().registerMcp({ namespace: "big", program: "npx", callTimeoutMs: 7_200_000 }));
    expect(error.code).toBe("PROVIDER_INVALID");
    expect(error.message).toBe('MCP provider "big": field "callTimeoutMs" must be a whole number of milliseconds from 1 to 3600000 (one hour), got 7200000');
    const mcpServers = thrown(() => parse({ mcpServers: { wiki: { url: "http://127.0.0.1:1/mcp", callTimeoutMs: "slow" } } }));
    expect(mcpServers.message).toBe(
      '/app/servers.json: server "wiki": field "callTimeoutMs" must be a whole number of milliseconds from 1 to 3600000 (one hour), got string',
    );
  });
});
