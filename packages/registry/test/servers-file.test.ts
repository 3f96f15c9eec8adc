import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseServersFile, ToolRegistry } from "../src/index.js";
import { nativeTool, rejected, thrown } from "./helpers.js";

const root = mkdtempSync(path.join(os.tmpdir(), "ow-servers-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FILE = path.join(root, "app", "servers.json");

function parse(document: unknown, file = FILE) {
  return parseServersFile(typeof document === "string" ? document : JSON.stringify(document), file);
}

describe("servers.json: the project's own shape", () => {
  it("M1 reads stdio and streamable_http servers, resolving relative paths against the file's folder", () => {
    const providers = parse({
      servers: {
        acer: { transport: "stdio", command: "bin/acer-mcp-launcher", args: ["--quiet"], env: { LEVEL: "1" }, cwd: "." },
        local: { transport: "streamable_http", url: "http://127.0.0.1:8123/mcp", headers: { "X-Token": "t" } },
        npx: { transport: "stdio", command: "npx", args: ["-y", "server"] },
        abs: { transport: "stdio", command: "/usr/bin/env", placement: "sandbox" },
      },
    });
    expect(providers).toEqual([
      { transport: "stdio", namespace: "abs", program: "/usr/bin/env", args: [], placement: "sandbox" },
      {
        transport: "stdio",
        namespace: "acer",
        program: path.join(root, "app", "bin", "acer-mcp-launcher"),
        args: ["--quiet"],
        env: { LEVEL: "1" },
        cwd: path.join(root, "app"),
      },
      { transport: "streamable_http", namespace: "local", url: "http://127.0.0.1:8123/mcp", headers: { "X-Token": "t" } },
      { transport: "stdio", namespace: "npx", program: "npx", args: ["-y", "server"] },
    ]);
  });

  it("M1 resolves only command and cwd against the file's folder: args and env stay as written, and no cwd stays none (README)", () => {
    const [pinned, tickets] = parse({
      servers: {
        tickets: { transport: "stdio", command: "node", args: ["tickets-server.mjs", "../data"], env: { TICKETS_DB: "tickets.db" } },
        pinned: { transport: "stdio", command: "node", args: ["tickets-server.mjs"], cwd: "." },
      },
    });
    expect(tickets).toEqual({
      transport: "stdio",
      namespace: "tickets",
      program: "node",
      args: ["tickets-server.mjs", "../data"],
      env: { TICKETS_DB: "tickets.db" },
    });
    expect(pinned).toEqual({ transport: "stdio", namespace: "pinned", program: "node", args: ["tickets-server.mjs"], cwd: path.join(root, "app") });
  });

  it("M1 accepts a UTF-8 BOM and an empty server list", () => {
    expect(parse('\uFEFF{"servers":{}}')).toEqual([]);
  });

  it.each([
    ["not json", "SERVERS_FILE_INVALID_JSON", "not valid JSON"],
    [[], "SERVERS_FILE_INVALID", "must be a JSON object"],
    [{}, "SERVERS_FILE_INVALID", '"servers"'],
    [{ servers: {}, mcpServers: {} }, "SERVERS_FILE_INVALID", "keep one"],
    [{ servers: [] }, "SERVERS_FILE_INVALID", 'field "servers" must be an object'],
    [{ servers: {}, extra: 1 }, "SERVERS_FILE_INVALID", '"extra"'],
    [{ servers: { acer: "bin/acer" } }, "SERVERS_FILE_INVALID", 'server "acer": must be an object'],
    [{ servers: { acer: { command: "x" } } }, "SERVERS_FILE_INVALID", 'server "acer": field "transport" is missing'],
    [{ servers: { acer: { transport: "sse", url: "x" } } }, "PROVIDER_TRANSPORT_UNKNOWN", 'server "acer": field "transport" "sse"'],
    [{ servers: { acer: { transport: "stdio" } } }, "PROVIDER_INVALID", 'server "acer": field "command" must be a non-empty string'],
    [{ servers: { acer: { transport: "stdio", command: 5 } } }, "PROVIDER_INVALID", 'server "acer": field "command"'],
    [{ servers: { acer: { transport: "stdio", command: "x", comand: "y" } } }, "SERVERS_FILE_INVALID", '"comand" is not known'],
    [{ servers: { acer: { transport: "stdio", command: "x", args: "y" } } }, "PROVIDER_INVALID", 'field "args" must be an array'],
    [{ servers: { acer: { transport: "stdio", command: "x", env: [] } } }, "PROVIDER_INVALID", 'field "env"'],
    [{ servers: { acer: { transport: "stdio", command: "x", cwd: 1 } } }, "PROVIDER_INVALID", 'field "cwd"'],
    [{ servers: { web: { transport: "streamable_http" } } }, "PROVIDER_INVALID", 'server "web": field "url"'],
    [{ servers: { web: { transport: "streamable_http", url: "http://example.com/" } } }, "PROVIDER_URL_NOT_LOCAL", 'server "web"'],
    [{ servers: { web: { transport: "streamable_http", url: "http://a.b/", allowRemote: "yes" } } }, "PROVIDER_INVALID", '"allowRemote"'],
    [{ servers: { web: { transport: "stdio", command: "x", placement: "vm" } } }, "PLACEMENT_INVALID", 'server "web": field "placement"'],
    [{ servers: { openworker: { transport: "stdio", command: "x" } } }, "NAMESPACE_RESERVED", 'server "openworker"'],
    [{ servers: { "my server": { transport: "stdio", command: "x" } } }, "NAMESPACE_INVALID", 'server "my server"'],
  ])("M1 rejects %j with %s naming the entry", (document, code, fragment) => {
    const error = thrown(() => parse(document, "servers.json"));
    expect(error.code).toBe(code);
    expect(error.message).toContain("servers.json");
    expect(error.message).toContain(fragment);
  });
});

describe("servers.json: messages that fit the field", () => {
  it("M1 an env value that is not a string is refused as an env value (no word of headers), never echoed", () => {
    const error = thrown(() => parse({ servers: { wiki: { transport: "stdio", command: "node", env: { PORT: 8080 } } } }, "servers.json"));
    expect(error.code).toBe("PROVIDER_INVALID");
    expect(error.message).toBe('servers.json: server "wiki": field "env.PORT" must be a string without NUL, got number');
    const header = thrown(() =>
      parse({ servers: { web: { transport: "streamable_http", url: "http://127.0.0.1:1/mcp", headers: { "X-Key": 12345678 } } } }, "servers.json"),
    );
    expect(header.message).toBe('servers.json: server "web": field "headers.X-Key" must be a string without NUL or line breaks, got number');
    expect(header.message).not.toContain("12345678");
  });

  it('M1 registerMcp\'s "program" in servers.json says to use "command", in either shape', () => {
    const own = thrown(() => parse({ servers: { parcels: { transport: "stdio", program: "node", args: ["parcels-server.mjs"] } } }, "servers.json"));
    expect(own.code).toBe("SERVERS_FILE_INVALID");
    expect(own.message).toBe(
      'servers.json: server "parcels": field "program" is not known for transport "stdio" (known: transport, command, args, env, cwd, placement, sandbox, connectTimeoutMs, callTimeoutMs); ' +
        'use "command" (registerMcp\'s "program" is "command" in servers.json)',
    );
    const foreign = thrown(() => parse({ mcpServers: { parcels: { program: "node", args: ["parcels-server.mjs"] } } }, "servers.json"));
    expect(foreign.code).toBe("PROVIDER_INVALID");
    expect(foreign.message).toBe(
      'servers.json: server "parcels": field "command" is missing and "program" is given; use "command" (registerMcp\'s "program" is "command" in servers.json)',
    );
  });
});

describe("servers.json: the mcpServers shape other MCP clients use", () => {
  it("M1 reads command entries as stdio and url/type entries as streamable HTTP", () => {
    const providers = parse({
      globalShortcut: "ignored: other clients keep their settings here",
      mcpServers: {
        files: { command: "node", args: ["./server.js"], env: { A: "b" }, autoApprove: [] },
        http: { type: "streamable-http", url: "http://localhost:3000/mcp" },
        plain: { type: "http", url: "http://127.0.0.1:3001/mcp", headers: { Authorization: "Bearer x" } },
        bare: { url: "http://[::1]:3002/mcp" },
        launcher: { type: "stdio", command: "./bin/launch" },
        off: { command: 12, disabled: true },
      },
    });
    expect(providers.map((provider) => [provider.namespace, provider.transport])).toEqual([
      ["bare", "streamable_http"],
      ["files", "stdio"],
      ["http", "streamable_http"],
      ["launcher", "stdio"],
      ["plain", "streamable_http"],
    ]);
    expect(providers.find((provider) => provider.namespace === "launcher")).toMatchObject({
      program: path.join(root, "app", "bin", "launch"),
    });
    expect(providers.find((provider) => provider.namespace === "files")).toMatchObject({ program: "node", args: ["./server.js"] });
  });

  it.each([
    [{ mcpServers: { legacy: { type: "sse", url: "http://127.0.0.1/sse" } } }, "PROVIDER_TRANSPORT_UNKNOWN", "SSE"],
    [{ mcpServers: { files: { args: [] } } }, "PROVIDER_INVALID", 'server "files": field "command"'],
    [{ mcpServers: { files: { command: "x", env: { A: 1 } } } }, "PROVIDER_INVALID", 'field "env.A"'],
    [{ mcpServers: { web: { type: "http" } } }, "PROVIDER_INVALID", 'server "web": field "url"'],
    [{ mcpServers: { web: { type: 3, url: "http://127.0.0.1/" } } }, "PROVIDER_TRANSPORT_UNKNOWN", 'field "type"'],
  ])("M1 rejects %j with %s naming the entry", (document, code, fragment) => {
    const error = thrown(() => parse(document, "claude.json"));
    expect(error.code).toBe(code);
    expect(error.message).toContain("claude.json");
    expect(error.message).toContain(fragment);
  });
});

describe("servers.json: keys named like Object.prototype members", () => {
  // Written as text: a "__proto__" key in a JavaScript object literal would set the prototype.
  const OWN = `{"servers":{
    "__proto__":{"transport":"stdio","command":"/bin/proto","env":{"__proto__":"p","constructor":"c","toString":"t"}},
    "constructor":{"transport":"streamable_http","url":"http://127.0.0.1:1/mcp","headers":{"__proto__":"h","constructor":"k"}}
  }}`;

  it("M1 a server, env name or header named __proto__ or constructor is kept as its own key, never dropped", () => {
    const providers = parse(OWN);
    expect(providers.map((provider) => provider.namespace)).toEqual(["__proto__", "constructor"]);
    const [proto, constructor] = providers;
    if (proto?.transport !== "stdio" || constructor?.transport !== "streamable_http") throw new Error("wrong transports");
    expect(Object.keys(proto.env!)).toEqual(["__proto__", "constructor", "toString"]);
    expect(Object.entries(proto.env!)).toEqual([
      ["__proto__", "p"],
      ["constructor", "c"],
      ["toString", "t"],
    ]);
    expect(Object.entries(constructor.headers!)).toEqual([
      ["__proto__", "h"],
      ["constructor", "k"],
    ]);
    // A spread (how the bridge builds a child's environment) keeps them too.
    expect(Object.keys({ ...proto.env })).toEqual(["__proto__", "constructor", "toString"]);
  });

  it("M1 env and header maps find only their own keys", () => {
    const [proto] = parse('{"mcpServers":{"x":{"command":"/bin/x","env":{"A":"1"}}}}');
    const env = (proto as { env: Record<string, string> }).env;
    expect(env.constructor).toBeUndefined();
    expect(env.toString).toBeUndefined();
    expect(env.A).toBe("1");
  });

  it("M1 the mcpServers shape keeps a __proto__ server and env name too", () => {
    const [provider] = parse('{"mcpServers":{"__proto__":{"command":"/bin/p","env":{"__proto__":"v"}}}}');
    expect(provider).toMatchObject({ namespace: "__proto__", program: "/bin/p" });
    expect(Object.entries((provider as { env: object }).env)).toEqual([["__proto__", "v"]]);
  });

  it("M1 loadServersFile registers a provider named __proto__ from a real file", async () => {
    const file = path.join(root, "proto.json");
    writeFileSync(file, OWN);
    const registry = new ToolRegistry();
    await registry.loadServersFile(file);
    expect(registry.providers().map((provider) => provider.namespace)).toEqual(["__proto__", "constructor"]);
    expect(registry.namespaceOwner("__proto__")).toBe("mcp");
  });

  it("M1 registerMcp keeps a __proto__ env name given in code", () => {
    const env = JSON.parse('{"__proto__":"v","PATH":"/bin"}') as Record<string, string>;
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "acer", program: "/bin/acer", env });
    const provider = registry.provider("acer");
    expect(Object.keys((provider as { env: object }).env)).toEqual(["__proto__", "PATH"]);
  });
});

describe("ToolRegistry.loadServersFile", () => {
  it("M1 registers every provider of a real file", async () => {
    mkdirSync(path.dirname(FILE), { recursive: true });
    writeFileSync(FILE, JSON.stringify({ servers: { acer: { transport: "stdio", command: "bin/acer" } } }));
    const registry = new ToolRegistry();
    await registry.loadServersFile(FILE);
    expect(registry.provider("acer")).toMatchObject({ program: path.join(root, "app", "bin", "acer") });
  });

  it("N5 a servers file conflicting with native tools registers nothing and names both", async () => {
    const file = path.join(root, "conflict.json");
    writeFileSync(file, JSON.stringify({ servers: { a: { transport: "stdio", command: "a" }, example: { transport: "stdio", command: "e" } } }));
    const registry = new ToolRegistry();
    registry.register(nativeTool("example.shout"));
    const error = await rejected(registry.loadServersFile(file));
    expect(error.code).toBe("NAMESPACE_CONFLICT");
    expect(error.message).toContain('"example.shout"');
    expect(error.message.startsWith(`${file}: server "example": `)).toBe(true);
    expect(error.details).toMatchObject({ file });
    expect(registry.providers()).toEqual([]);
  });

  it("N5 a servers file repeating an already registered provider fails", async () => {
    const file = path.join(root, "dup.json");
    writeFileSync(file, JSON.stringify({ mcpServers: { acer: { command: "acer2" } } }));
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "acer", program: "acer1" });
    const error = await rejected(registry.loadServersFile(file));
    expect(error.code).toBe("DUPLICATE_PROVIDER");
    expect(error.message).toContain(`${file}: server "acer": `);
  });

  it.each([
    ["missing.json", "SERVERS_FILE_NOT_FOUND"],
    ["folder", "SERVERS_FILE_IS_DIRECTORY"],
    ["huge.json", "SERVERS_FILE_TOO_LARGE"],
    ["latin1.json", "SERVERS_FILE_NOT_UTF8"],
  ])("M1 a servers file %s fails with %s", async (name, code) => {
    mkdirSync(path.join(root, "folder"), { recursive: true });
    writeFileSync(path.join(root, "huge.json"), `{"servers":{}}${" ".repeat(1024 * 1024)}`);
    writeFileSync(path.join(root, "latin1.json"), Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x7d]));
    const error = await rejected(new ToolRegistry().loadServersFile(path.join(root, name)));
    expect(error.code).toBe(code);
    expect(error.message).toContain(name);
  });
});
