import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { McpBridge, MCP_ERROR_CODES } from "@openworker/mcp-bridge";
import type { ProviderSandboxPolicy, StdioProviderDefinition } from "@openworker/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapLauncher, SANDBOX_ERROR_CODES, type BubblewrapLauncherOptions } from "../src/index.js";
import { freshFolder, probeReads, probeServer, processesWithMarker, requireBubblewrap } from "./helpers.js";

const readable = freshFolder("sandbox-read-");
const writable = freshFolder("sandbox-write-");
const outside = freshFolder("sandbox-outside-");
const canary = path.join(outside, "canary.txt");
const allowedFile = path.join(readable, "allowed.txt");
let listener: Server;
let port = 0;

beforeAll(async () => {
  requireBubblewrap();
  writeFileSync(canary, "canary-contents");
  writeFileSync(allowedFile, "allowed-contents");
  listener = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as { port: number }).port;
  process.env.SANDBOX_HOST_CANARY = "host-secret-canary";
});

afterAll(async () => {
  delete process.env.SANDBOX_HOST_CANARY;
  await new Promise((resolve) => listener.close(resolve));
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

  it("A4 a policy that allows hosts fails to start unless the host accepts the whole network, which then includes loopback", async () => {
    const bridge = new McpBridge([probe("unused", { network: { allow: ["api.example.com"] } })], { sandbox: bubblewrapLauncher() });
    try {
      const { unavailable } = await bridge.openSession("allowlist").discover(["probe"]);
      expect(unavailable).toEqual([
        { namespace: "probe", code: MCP_ERROR_CODES.sandboxFailed, message: expect.stringContaining("bubblewrap cannot limit a sandbox to some hosts") },
      ]);
    } finally {
      await bridge.dispose();
    }
    // Accepted, the allowlist is not enforced: the whole network is reachable (documented).
    await withProbe(
      { network: { allow: ["api.example.com"] } },
      async (call) => {
        expect(await call("connect", { port })).toBe("ok connected");
      },
      { unfilteredNetwork: true },
    );
  });

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
