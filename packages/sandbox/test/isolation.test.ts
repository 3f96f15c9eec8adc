import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { McpBridge, MCP_ERROR_CODES } from "@openworker/mcp-bridge";
import type { ProviderSandboxPolicy, StdioProviderDefinition } from "@openworker/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapLauncher, SANDBOX_ERROR_CODES, type BubblewrapLauncherOptions } from "../src/index.js";
import { freshFolder, killedHost, probeReads, probeServer, processesWithMarker, requireBubblewrap } from "./helpers.js";

const readable = freshFolder("sandbox-read-");
const writable = freshFolder("sandbox-write-");
const outside = freshFolder("sandbox-outside-");
const canary = path.join(outside, "canary.txt");
const allowedFile = path.join(readable, "allowed.txt");
let listener: Server;
let port = 0;
/** Loopback HTTP servers: one the policy allows, one it does not; `requests` is what the allowed one served. */
const web = { allowed: 0, other: 0, requests: [] as string[], otherRequests: 0 };
/** Loopback TCP servers that greet whoever connects: one allowed (as localhost:port), one not. */
const tcp = { allowed: 0, other: 0 };
const servers: { close(done: () => void): unknown }[] = [];

async function listen(server: Server | HttpServer): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

beforeAll(async () => {
  requireBubblewrap();
  writeFileSync(canary, "canary-contents");
  writeFileSync(allowedFile, "allowed-contents");
  listener = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as { port: number }).port;
  web.allowed = await listen(
    createHttpServer((request, response) => {
      web.requests.push(`${request.method} ${request.url}`);
      response.end(`allowed web ${request.method} ${request.url}`);
    }),
  );
  web.other = await listen(
    createHttpServer((_, response) => {
      web.otherRequests++;
      response.end("other web");
    }),
  );
  tcp.allowed = await listen(createServer((socket) => socket.end("allowed tcp\n")));
  tcp.other = await listen(createServer((socket) => socket.end("other tcp\n")));
  process.env.SANDBOX_HOST_CANARY = "host-secret-canary";
});

afterAll(async () => {
  delete process.env.SANDBOX_HOST_CANARY;
  await new Promise((resolve) => listener.close(resolve));
  for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
});

function probe(marker: string, sandbox: ProviderSandboxPolicy = {}): StdioProviderDefinition {
  return {
    transport: "stdio",
    namespace: "probe",
    program: process.execPath,
    args: [probeServer],
    env: { PROBE_MARKER: marker, PROVIDER_OWN: "own-value" },
    placement: "sandbox",
    sandbox: { ...sandbox, read: [...probeReads, ...(sandbox.read ?? [])] },
  };
}

/** Runs `body` with a session on the sandboxed probe, then closes it and checks nothing of it is left (M4). */
async function withProbe(
  sandbox: ProviderSandboxPolicy,
  body: (call: (tool: string, args?: Record<string, unknown>) => Promise<string>) => Promise<void>,
  options?: BubblewrapLauncherOptions,
) {
  const marker = `sandbox-probe-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const bridge = new McpBridge([probe(marker, sandbox)], { sandbox: bubblewrapLauncher(options), closeGraceMs: 500 });
  try {
    const session = bridge.openSession(`isolation-${marker}`);
    const { unavailable } = await session.discover(["probe"]);
    expect(unavailable).toEqual([]);
    await body(async (tool, args = {}) => (await session.callTool("probe", tool, args, {})).output?.text ?? "(no text)");
    expect(processesWithMarker(marker).length).toBeGreaterThan(0);
    await session.close();
    await session.joinCleanup();
    expect(processesWithMarker(marker)).toEqual([]);
  } finally {
    await bridge.dispose();
  }
}

describe("bubblewrap sandbox (Linux, real bwrap, real MCP server)", () => {
  it("A4 M4 reads only its read paths, writes only its write paths and its scratch folder, and nothing of it is left after close", async () => {
    await withProbe({ read: [readable], write: [writable] }, async (call) => {
      expect(await call("read_file", { path: allowedFile })).toBe("ok allowed-contents");
      expect(await call("read_file", { path: canary })).toBe("refused ENOENT");
      expect(await call("read_file", { path: "/etc/shadow" })).toMatch(/^refused /);
      expect(await call("write_file", { path: path.join(writable, "out.txt"), text: "written inside" })).toBe("ok written");
      expect(await call("write_file", { path: path.join(readable, "nope.txt"), text: "x" })).toBe("refused EROFS");
      expect(await call("write_file", { path: path.join(outside, "nope.txt"), text: "x" })).toMatch(/^refused (ENOENT|EROFS)$/);
      expect(await call("write_file", { path: "/usr/nope.txt", text: "x" })).toBe("refused EROFS");
      expect(await call("cwd")).toBe("/tmp");
      expect(await call("write_file", { path: "/tmp/scratch.txt", text: "scratch" })).toBe("ok written");
      expect(await call("read_file", { path: "/tmp/scratch.txt" })).toBe("ok scratch");
    });
    expect(readFileSync(path.join(writable, "out.txt"), "utf8")).toBe("written inside");
    expect(existsSync(path.join(readable, "nope.txt")) || existsSync(path.join(outside, "nope.txt"))).toBe(false);
    // The scratch folder was a tmpfs of the sandbox's own: the host's /tmp never saw it.
    expect(existsSync("/tmp/scratch.txt")).toBe(false);
  });

  it("A4 without network in its policy it cannot connect to a loopback port the host opened", async () => {
    await withProbe({}, async (call) => {
      expect(await call("connect", { port })).toBe("refused ECONNREFUSED");
    });
    await withProbe({ network: "none" }, async (call) => {
      expect(await call("connect", { port })).toBe("refused ECONNREFUSED");
    });
  });

  it("A4 a policy that allows hosts reaches exactly those, through the host's proxy, and no other host, port or raw connection", async () => {
    const allowed = `127.0.0.1:${web.allowed}`;
    await withProbe({ network: { allow: [allowed, `localhost:${tcp.allowed}`] } }, async (call) => {
      // Node.js's fetch (NODE_USE_ENV_PROXY: a CONNECT tunnel), an absolute-form GET (curl, Python) and a raw tunnel.
      expect(await call("fetch_url", { url: `http://${allowed}/hello` })).toBe("ok 200 allowed web GET /hello");
      expect(await call("proxy_get", { url: `http://${allowed}/plain?x=1` })).toBe("ok 200 allowed web GET /plain?x=1");
      expect(await call("tunnel", { host: "localhost", port: tcp.allowed })).toBe("ok allowed tcp");
      // A port or a host the policy does not list is refused by the proxy, naming what was refused.
      expect(await call("proxy_get", { url: `http://127.0.0.1:${web.other}/` })).toBe(
        `ok 403 the sandbox policy of MCP provider "probe" does not allow 127.0.0.1:${web.other}`,
      );
      expect(await call("fetch_url", { url: `http://127.0.0.1:${web.other}/` })).toMatch(/^refused /);
      expect(await call("tunnel", { host: "127.0.0.1", port: tcp.allowed })).toBe("refused 403");
      expect(await call("tunnel", { host: "localhost", port: tcp.other })).toBe("refused 403");
      // Around the proxy there is no network at all.
      expect(await call("connect", { port: web.allowed })).toBe("refused ECONNREFUSED");
      expect(await call("connect", { port })).toBe("refused ECONNREFUSED");
    });
    expect(web.requests).toEqual(["GET /hello", "GET /plain?x=1"]);
    expect(web.otherRequests).toBe(0);
  });

  it("A4 the host may give a provider that allows hosts the whole network instead, loopback included (not filtered)", async () => {
    await withProbe(
      { network: { allow: ["api.example.com"] } },
      async (call) => {
        expect(await call("connect", { port })).toBe("ok connected");
        expect(await call("env", { name: "HTTPS_PROXY" })).toBe("unset");
      },
      { unfilteredNetwork: true },
    );
  });

  it.each(["SIGKILL", "SIGTERM"] as const)(
    "M4 a host killed by %s mid-call takes its sandboxed tree with it, the sandbox's entry and proxy forwarder included",
    async (signal) => {
      const marker = `sandbox-killed-${signal}-${process.pid}-${Math.random().toString(36).slice(2)}`;
      const host = spawn(process.execPath, [killedHost, probeServer, marker, `127.0.0.1:${web.allowed}`, JSON.stringify(probeReads)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve, reject) => {
        host.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
        host.once("exit", (code) => reject(new Error(`the host exited (${code}) before its provider was up`)));
      });
      // The bwrap monitor, the sandbox's entry and the probe: each carries the provider's environment.
      expect(processesWithMarker(marker).length).toBeGreaterThanOrEqual(2);
      host.kill(signal);
      // The reaper sends SIGTERM, then SIGKILL a second later; the kernel takes a moment more.
      let left = processesWithMarker(marker);
      for (let waited = 0; left.length > 0 && waited < 8_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        left = processesWithMarker(marker);
      }
      for (const pid of left) process.kill(pid, "SIGKILL");
      expect(left).toEqual([]);
    },
  );

  it("E6 sees exactly the safe base environment plus its provider's own, never a canary of the host's", async () => {
    await withProbe({}, async (call) => {
      expect(await call("env", { name: "SANDBOX_HOST_CANARY" })).toBe("unset");
      expect(await call("env", { name: "PROVIDER_OWN" })).toBe("set own-value");
      expect(await call("env", { name: "PATH" })).toBe(`set ${process.env.PATH}`);
    });
  });

  it("A4 where bubblewrap is missing or cannot create namespaces, the provider fails with a code naming what is missing and never runs on the host", async () => {
    const fakeBwrap = path.join(freshFolder("sandbox-fake-"), "bwrap");
    writeFileSync(
      fakeBwrap,
      "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
      { mode: 0o755 },
    );
    for (const [bwrap, code, said] of [
      ["/nonexistent/bwrap", SANDBOX_ERROR_CODES.bwrapMissing, 'bubblewrap was given as "/nonexistent/bwrap", which is not an executable file'],
      [fakeBwrap, SANDBOX_ERROR_CODES.namespacesUnavailable, "cannot create a sandbox on this machine: bwrap: No permissions to creating new namespace"],
    ] as const) {
      const launcher = bubblewrapLauncher({ bwrap });
      const launch = { namespace: "probe", program: process.execPath, args: [probeServer], env: {}, cwd: undefined };
      expect(() => launcher(launch)).toThrow(expect.objectContaining({ code, message: expect.stringContaining(said) }));
      const marker = `never-started-${Math.random().toString(36).slice(2)}`;
      const bridge = new McpBridge([probe(marker)], { sandbox: launcher });
      try {
        const { unavailable } = await bridge.openSession("missing").discover(["probe"]);
        expect(unavailable).toEqual([{ namespace: "probe", code: MCP_ERROR_CODES.sandboxFailed, message: expect.stringContaining(said) }]);
        expect(processesWithMarker(marker)).toEqual([]);
      } finally {
        await bridge.dispose();
      }
    }
  });

  it("A4 a policy path that does not exist fails the start naming the field", () => {
    const launch = {
      namespace: "probe",
      program: process.execPath,
      args: [probeServer],
      env: {},
      cwd: undefined,
      sandbox: { write: [path.join(outside, "missing")] },
    };
    expect(() => bubblewrapLauncher()(launch)).toThrow(
      expect.objectContaining({ code: SANDBOX_ERROR_CODES.pathMissing, message: expect.stringContaining("sandbox.write[0]") }),
    );
  });
});
