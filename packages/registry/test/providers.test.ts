import { describe, expect, it } from "vitest";
import { ToolRegistry } from "../src/index.js";
import { thrown } from "./helpers.js";

describe("ToolRegistry: MCP providers", () => {
  it("M1 registers a stdio provider with the seed's fields and a streamable-HTTP provider", () => {
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "acer", program: "bin/acer-mcp-launcher" });
    registry.registerMcpHttp({ namespace: "local", url: "http://127.0.0.1:8123/mcp", headers: { Authorization: "x" } });
    registry.registerProvider({ transport: "stdio", namespace: "box", program: "/opt/box", args: ["--x"], placement: "sandbox" });
    expect(registry.provider("acer")).toEqual({ transport: "stdio", namespace: "acer", program: "bin/acer-mcp-launcher", args: [] });
    expect(registry.provider("local")).toMatchObject({ transport: "streamable_http", url: "http://127.0.0.1:8123/mcp" });
    expect(registry.provider("box")?.placement).toBe("sandbox");
    expect(registry.providers().map((provider) => provider.namespace)).toEqual(["acer", "box", "local"]);
    expect(registry.namespaceOwner("acer")).toBe("mcp");
    expect(registry.namespaceOwner("nobody")).toBeUndefined();
    expect(registry.count()).toBe(0);
    expect(Object.isFrozen(registry.provider("acer"))).toBe(true);
  });

  it("A4 refuses sandbox placement for a streamable_http provider: the host starts no process it could place", () => {
    const registry = new ToolRegistry();
    const error = thrown(() =>
      registry.registerProvider({ transport: "streamable_http", namespace: "svc", url: "http://127.0.0.1:8123/mcp", placement: "sandbox" }),
    );
    expect(error.code).toBe("PLACEMENT_INVALID");
    expect(error.message).toContain('MCP provider "svc": field "placement" "sandbox" applies to stdio providers');
    expect(registry.provider("svc")).toBeUndefined();
    registry.registerProvider({ transport: "streamable_http", namespace: "svc", url: "http://127.0.0.1:8123/mcp", placement: "host" });
    expect(registry.provider("svc")?.placement).toBe("host");
  });

  it("N5 refuses two providers on one namespace and names both", () => {
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "acer", program: "bin/acer-a" });
    const error = thrown(() => registry.registerMcpHttp({ namespace: "acer", url: "http://localhost:9/mcp" }));
    expect(error.code).toBe("DUPLICATE_PROVIDER");
    expect(error.message).toContain("bin/acer-a");
    expect(error.message).toContain("http://localhost:9/mcp");
  });

  it("N1 provider namespaces are case-sensitive: acer and Acer are different", () => {
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "acer", program: "a" });
    registry.registerMcp({ namespace: "Acer", program: "b" });
    expect(registry.providers()).toHaveLength(2);
  });

  it.each([
    [{ namespace: "openworker", program: "x" }, "NAMESPACE_RESERVED"],
    [{ namespace: "OPENWORKER", program: "x" }, "NAMESPACE_RESERVED"],
    [{ namespace: "acer.care", program: "x" }, "NAMESPACE_INVALID"],
    [{ namespace: "", program: "x" }, "NAMESPACE_INVALID"],
    [{ namespace: "a".repeat(78), program: "x" }, "NAMESPACE_TOO_LONG"],
    [{ namespace: "acer", program: "" }, "PROVIDER_INVALID"],
    [{ namespace: "acer", program: 7 }, "PROVIDER_INVALID"],
    [{ namespace: "acer", program: "x", args: "--flag" }, "PROVIDER_INVALID"],
    [{ namespace: "acer", program: "x", args: [1] }, "PROVIDER_INVALID"],
    [{ namespace: "acer", program: "x", env: { A: 1 } }, "PROVIDER_INVALID"],
    [{ namespace: "acer", program: "x", env: { "A=B": "1" } }, "PROVIDER_INVALID"],
    [{ namespace: "acer", program: "x", cwd: "" }, "PROVIDER_INVALID"],
    [{ namespace: "acer", program: "x", placement: "cloud" }, "PLACEMENT_INVALID"],
  ])("M1/N3 registerMcp refuses %j with %s", (definition, code) => {
    const registry = new ToolRegistry();
    expect(thrown(() => registry.registerMcp(definition as never)).code).toBe(code);
    expect(registry.providers()).toEqual([]);
  });

  it("N4 accepts the longest namespace whose shortest alias fits", () => {
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "a".repeat(77), program: "x" });
    expect(registry.providers()).toHaveLength(1);
  });

  it.each([["http://127.0.0.1:8123/mcp"], ["https://localhost/mcp"], ["http://[::1]:8000/"], ["http://127.1.2.3/mcp"]])(
    "M1 accepts the local streamable-HTTP URL %s",
    (url) => {
      const registry = new ToolRegistry();
      registry.registerMcpHttp({ namespace: "local", url });
      expect(registry.provider("local")).toMatchObject({ url });
    },
  );

  it.each([
    ["http://example.com/mcp", "PROVIDER_URL_NOT_LOCAL"],
    ["http://10.0.0.1/mcp", "PROVIDER_URL_NOT_LOCAL"],
    ["http://localhost.evil.com/mcp", "PROVIDER_URL_NOT_LOCAL"],
    ["ftp://127.0.0.1/mcp", "PROVIDER_INVALID"],
    ["not a url", "PROVIDER_INVALID"],
    ["http://user:secret@127.0.0.1/mcp", "PROVIDER_INVALID"],
    // E6: a user name alone, or a percent-encoded password, is a credential too.
    ["http://secret-user@127.0.0.1/mcp", "PROVIDER_INVALID"],
    ["http://svc:p%40ss-secret@localhost:8080/mcp", "PROVIDER_INVALID"],
  ])("M1 refuses the streamable-HTTP URL %s with %s", (url, code) => {
    const error = thrown(() => new ToolRegistry().registerMcpHttp({ namespace: "local", url }));
    expect(error.code).toBe(code);
    expect(error.message).not.toContain("secret");
  });

  it("M1 connects to a remote URL only with allowRemote: true", () => {
    const registry = new ToolRegistry();
    registry.registerMcpHttp({ namespace: "remote", url: "https://mcp.example.com/mcp", allowRemote: true });
    expect(registry.provider("remote")).toMatchObject({ allowRemote: true });
  });

  it("E6 header and env values are never echoed in errors", () => {
    const error = thrown(() => new ToolRegistry().registerMcpHttp({ namespace: "l", url: "http://127.0.0.1/", headers: { "X-Key": "sec\nret" } }));
    expect(error.code).toBe("PROVIDER_INVALID");
    expect(error.message).not.toContain("sec");
    expect(thrown(() => new ToolRegistry().registerMcpHttp({ namespace: "l", url: "http://127.0.0.1/", headers: { "bad name": "v" } })).code).toBe(
      "PROVIDER_INVALID",
    );
  });

  it("E6 a URL that does not parse is shown without its credentials or query", () => {
    const registry = new ToolRegistry();
    const error = thrown(() => registry.registerMcpHttp({ namespace: "l", url: "http://admin:S3cretPassw0rd@127.0.0.1:99999/mcp?token=T0KEN" }));
    expect(error.code).toBe("PROVIDER_INVALID");
    expect(error.message).toBe(
      'MCP provider "l": field "url" "http://(redacted)@127.0.0.1:99999/mcp?(redacted)" is not a valid URL (e.g. "http://127.0.0.1:8080/mcp")',
    );
    expect(JSON.stringify(error.details)).not.toMatch(/S3cret|T0KEN/);
  });

  it("E6 a conflict message shows a provider's URL without its query", () => {
    const registry = new ToolRegistry();
    registry.registerMcpHttp({ namespace: "svc", url: "http://127.0.0.1:8123/mcp?token=T0KEN-1" });
    const error = thrown(() => registry.registerMcpHttp({ namespace: "svc", url: "http://127.0.0.1:8124/mcp?token=T0KEN-2" }));
    expect(error.code).toBe("DUPLICATE_PROVIDER");
    expect(error.message).toContain('(url "http://127.0.0.1:8123/mcp")');
    expect(error.message).not.toContain("T0KEN");
  });

  it("M1 a definition that is not an object, or cannot be read, is PROVIDER_INVALID (never a bare TypeError)", () => {
    const registry = new ToolRegistry();
    for (const bad of [undefined, null, "acer", [], 3]) {
      expect(thrown(() => registry.registerMcp(bad as never)).code).toBe("PROVIDER_INVALID");
      expect(thrown(() => registry.registerMcpHttp(bad as never)).code).toBe("PROVIDER_INVALID");
      expect(thrown(() => registry.registerProvider(bad as never)).code).toBe("PROVIDER_INVALID");
    }
    const hostile = new Proxy(
      { namespace: "acer", program: "acer" },
      {
        get: () => {
          throw new Error("trap");
        },
      },
    );
    const error = thrown(() => registry.registerMcp(hostile as never));
    expect(error.code).toBe("PROVIDER_INVALID");
    expect(error.message).toContain("could not be read (trap)");
    expect(registry.providers()).toEqual([]);
  });

  it("M1 a field the definition does not know is refused, as the servers file refuses it", () => {
    const registry = new ToolRegistry();
    const stdio = thrown(() => registry.registerMcp({ namespace: "acer", program: "acer", argz: ["--x"] } as never));
    expect(stdio.code).toBe("PROVIDER_INVALID");
    expect(stdio.message).toBe(
      'MCP provider "acer": field "argz" is not known (known: transport, namespace, program, args, env, cwd, placement, sandbox, connectTimeoutMs, callTimeoutMs)',
    );
    const http = thrown(() => registry.registerMcpHttp({ namespace: "svc", url: "http://127.0.0.1:1/mcp", program: "x" } as never));
    expect(http.message).toContain(
      'field "program" is not known (known: transport, namespace, url, headers, allowRemote, placement, connectTimeoutMs, callTimeoutMs, oauth)',
    );
    // An optional field given as undefined is as good as left out.
    registry.registerMcp({ namespace: "acer", program: "acer", cwd: undefined });
    expect(registry.provider("acer")).toEqual({ transport: "stdio", namespace: "acer", program: "acer", args: [] });
  });

  it('M1 registerMcp given servers.json\'s "command" says to use "program"', () => {
    const registry = new ToolRegistry();
    const error = thrown(() => registry.registerMcp({ namespace: "parcels", command: "node", args: ["parcels-server.mjs"] } as never));
    expect(error.code).toBe("PROVIDER_INVALID");
    expect(error.message).toBe(
      'MCP provider "parcels": field "command" is not known (known: transport, namespace, program, args, env, cwd, placement, sandbox, connectTimeoutMs, callTimeoutMs); ' +
        'use "program" (servers.json\'s "command" is "program" here)',
    );
    expect(thrown(() => registry.registerProvider({ transport: "stdio", namespace: "parcels", command: "node" } as never)).message).toContain('use "program"');
    expect(registry.providers()).toEqual([]);
  });

  it("M1 an env value that is not a string is refused as an env value, never echoed", () => {
    const registry = new ToolRegistry();
    const number = thrown(() => registry.registerMcp({ namespace: "parcels", program: "node", env: { PORT: 8080 } } as never));
    expect(number.code).toBe("PROVIDER_INVALID");
    expect(number.message).toBe('MCP provider "parcels": field "env.PORT" must be a string without NUL, got number');
    const nul = thrown(() => registry.registerMcp({ namespace: "parcels", program: "node", env: { TOKEN: "s3cret\0value" } }));
    expect(nul.message).toBe('MCP provider "parcels": field "env.TOKEN" must be a string without NUL');
    const header = thrown(() =>
      registry.registerMcpHttp({ namespace: "svc", url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer s3cret\r\nX: y" } }),
    );
    expect(header.message).toBe('MCP provider "svc": field "headers.Authorization" must be a string without NUL or line breaks');
    expect(`${nul.message}${header.message}`).not.toContain("s3cret");
  });

  it("M1 refuses an unknown transport", () => {
    const error = thrown(() => new ToolRegistry().registerProvider({ transport: "sse", namespace: "x", url: "http://127.0.0.1/" } as never));
    expect(error.code).toBe("PROVIDER_TRANSPORT_UNKNOWN");
    expect(error.message).toContain('"sse"');
  });
});
