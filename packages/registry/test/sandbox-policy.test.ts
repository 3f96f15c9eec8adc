import { describe, expect, it } from "vitest";
import { parseServersFile, ToolRegistry } from "../src/index.js";
import { thrown } from "./helpers.js";

describe("sandbox policies of stdio providers", () => {
  it("A4 registerMcp and servers.json keep a sandbox policy; servers.json resolves relative paths against its folder", () => {
    const registry = new ToolRegistry();
    registry.registerMcp({
      namespace: "files",
      program: "/opt/files/mcp",
      placement: "sandbox",
      sandbox: { read: ["/srv/in"], write: ["/srv/out"], network: "none" },
    });
    expect(registry.providers()[0]).toMatchObject({ placement: "sandbox", sandbox: { read: ["/srv/in"], write: ["/srv/out"], network: "none" } });
    const [own, foreign] = [
      parseServersFile(
        JSON.stringify({
          servers: {
            files: { transport: "stdio", command: "bin/mcp", placement: "sandbox", sandbox: { read: ["data"], network: { allow: ["api.example.com"] } } },
          },
        }),
        "/app/servers.json",
      )[0],
      parseServersFile(
        JSON.stringify({ mcpServers: { files: { command: "node", placement: "sandbox", sandbox: { write: ["./out"] } } } }),
        "/app/servers.json",
      )[0],
    ];
    expect(own).toMatchObject({ sandbox: { read: ["/app/data"], network: { allow: ["api.example.com"] } } });
    expect(foreign).toMatchObject({ sandbox: { write: ["/app/out"] } });
  });

  it("A4 a malformed sandbox policy fails naming the field", () => {
    const register = (sandbox: unknown) =>
      thrown(() => new ToolRegistry().registerMcp({ namespace: "files", program: "/opt/files/mcp", placement: "sandbox", sandbox } as never));
    expect(register("strict").message).toContain('field "sandbox" must be an object');
    expect(register({ read: ["relative/dir"] }).message).toContain('field "sandbox.read[0]" must be an absolute path, got "relative/dir"');
    expect(register({ write: "/tmp" }).message).toContain('field "sandbox.write" must be an array of absolute paths');
    expect(register({ network: "all" }).message).toContain('field "sandbox.network" must be "none" or { "allow": [hosts] }');
    expect(register({ network: { allow: [] } }).message).toContain('field "sandbox.network.allow" must be a non-empty array');
    expect(register({ network: { allow: ["a b"] } }).message).toContain('field "sandbox.network.allow[0]" must be a host name');
    expect(register({ env: {} }).message).toContain('field "sandbox.env" is not known (known: read, write, network)');
    expect(register({ read: [1] }).code).toBe("PROVIDER_INVALID");
    expect(register({ read: [1] }).details.field).toBe("sandbox.read[0]");
  });

  it("A4 a sandbox policy applies only with placement sandbox, and never to a streamable_http provider", () => {
    const hosted = thrown(() => new ToolRegistry().registerMcp({ namespace: "files", program: "/opt/files/mcp", sandbox: { network: "none" } }));
    expect(hosted.code).toBe("PROVIDER_INVALID");
    expect(hosted.message).toContain('field "sandbox" is a sandbox policy and applies only with placement "sandbox"');
    const file = thrown(() =>
      parseServersFile(JSON.stringify({ servers: { files: { transport: "stdio", command: "/bin/mcp", placement: "host", sandbox: {} } } }), "servers.json"),
    );
    expect(file.message).toContain('servers.json: server "files": field "sandbox" is a sandbox policy');
    const http = thrown(() => new ToolRegistry().registerMcpHttp({ namespace: "web", url: "http://127.0.0.1:1/mcp", sandbox: {} } as never));
    expect(http.message).toContain('field "sandbox" is not known');
    const fileBad = thrown(() =>
      parseServersFile(
        JSON.stringify({ servers: { files: { transport: "stdio", command: "/bin/mcp", placement: "sandbox", sandbox: { read: [7] } } } }),
        "servers.json",
      ),
    );
    expect(fileBad.message).toContain('servers.json: server "files": field "sandbox.read[0]" must be an absolute path');
  });
});
