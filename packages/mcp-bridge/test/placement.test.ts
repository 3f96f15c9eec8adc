import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { McpBridge, MCP_ERROR_CODES, type SandboxLaunch, type SandboxLauncher } from "../src/index.js";
import { fixture, marker, processesWithMarker } from "./helpers.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mcp-bridge-placement-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// A4: isolation is offered to MCP providers through `placement: "sandbox"`. The bridge
// cannot sandbox anything itself: the host gives a launcher that wraps the command, and
// without one a sandboxed provider is never started (fail closed).
describe('placement "sandbox" (A4)', () => {
  const sandboxed = (env: Record<string, string>) => ({
    transport: "stdio" as const,
    namespace: "boxed",
    program: fixture("sandbox-probe.sh"),
    args: ["--flag"],
    env,
    placement: "sandbox" as const,
  });

  it("A4 without a sandbox launcher the provider is never started: unavailable, MCP_SANDBOX_UNAVAILABLE", async () => {
    const started = path.join(scratch, "never-started");
    const bridge = new McpBridge([sandboxed({ STARTED_FILE: started })]);
    try {
      const session = bridge.openSession("no-launcher");
      const { catalogs, unavailable } = await session.discover(["boxed"]);
      expect(catalogs).toEqual([]);
      expect(unavailable).toEqual([
        {
          namespace: "boxed",
          code: MCP_ERROR_CODES.sandboxUnavailable,
          message: expect.stringContaining('asks for placement "sandbox" and this host has no sandbox launcher'),
        },
      ]);
      expect(existsSync(started)).toBe(false);
      await session.close();
    } finally {
      await bridge.dispose();
    }
  });

  it("A4 M4 with a launcher the provider runs as the launcher's command, and its whole tree ends at close", async () => {
    const tag = marker("sandboxed");
    const seen: SandboxLaunch[] = [];
    // A real wrapper process (sh) that sets what only the "sandbox" can set and keeps the
    // provider as its child: the bridge owns and ends both.
    const launcher: SandboxLauncher = (launch) => {
      seen.push(launch);
      return {
        program: "/bin/sh",
        args: ["-c", 'SANDBOXED=yes "$@"; exit $?', "sandbox", launch.program, ...launch.args],
        env: { ...launch.env, TEST_MARKER: tag },
      };
    };
    const bridge = new McpBridge([sandboxed({ PROVIDER_OWN: "1" })], { sandbox: launcher, closeGraceMs: 300 });
    try {
      const session = bridge.openSession("with-launcher");
      const { catalogs } = await session.discover(["boxed"]);
      expect(catalogs[0]?.tools.map((tool) => tool.name)).toEqual(["where"]);
      expect((await session.callTool("boxed", "where", {}, {})).output?.text).toBe("sandboxed=yes");
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ namespace: "boxed", program: fixture("sandbox-probe.sh"), args: ["--flag"], cwd: undefined });
      expect(seen[0]!.env.PROVIDER_OWN).toBe("1");
      expect(seen[0]!.sandbox).toBeUndefined();
      expect(Object.isFrozen(seen[0]) && Object.isFrozen(seen[0]!.env)).toBe(true);
      expect(processesWithMarker(tag)).toHaveLength(2);
      await session.close();
      await session.joinCleanup();
      expect(processesWithMarker(tag)).toEqual([]);
    } finally {
      await bridge.dispose();
    }
  });

  it.each([
    [
      "throws",
      (() => {
        throw new Error("no bwrap on this machine");
      }) as SandboxLauncher,
      "the sandbox launcher threw: no bwrap on this machine",
    ],
    ["returns no command", (() => undefined) as unknown as SandboxLauncher, "returned no command object"],
    ["returns an empty program", (() => ({ program: "", args: [] })) as SandboxLauncher, '"program" must be a non-empty string'],
    ["returns args that are not strings", (() => ({ program: "/bin/sh", args: [1] })) as unknown as SandboxLauncher, '"args" must be an array of strings'],
  ])("A4 a launcher that %s: the provider is not started, MCP_SANDBOX_FAILED names why", async (_label, launcher, why) => {
    const started = path.join(scratch, `failed-${Math.random().toString(36).slice(2)}`);
    const bridge = new McpBridge([sandboxed({ STARTED_FILE: started })], { sandbox: launcher });
    try {
      const session = bridge.openSession("failing-launcher");
      const { unavailable } = await session.discover(["boxed"]);
      expect(unavailable[0]).toMatchObject({ namespace: "boxed", code: MCP_ERROR_CODES.sandboxFailed });
      expect(unavailable[0]!.message).toContain(why);
      expect(existsSync(started)).toBe(false);
      await session.close();
    } finally {
      await bridge.dispose();
    }
  });

  it("A4 the launcher receives the provider's sandbox policy as registered", async () => {
    const seen: SandboxLaunch[] = [];
    const sandbox = { read: ["/srv/in"], network: "none" as const };
    const bridge = new McpBridge([{ ...sandboxed({}), sandbox }], {
      sandbox: (launch) => (seen.push(launch), { program: "/bin/sh", args: [launch.program, ...launch.args], env: launch.env }),
    });
    try {
      await bridge.openSession("policy").discover(["boxed"]);
      expect(seen[0]?.sandbox).toEqual(sandbox);
    } finally {
      await bridge.dispose();
    }
  });

  it("a provider with placement host (or none) never goes through the launcher", async () => {
    let calls = 0;
    const bridge = new McpBridge([{ ...sandboxed({}), placement: "host" }], { sandbox: () => (calls++, { program: "/bin/false", args: [] }) });
    try {
      const session = bridge.openSession("host");
      await session.discover(["boxed"]);
      expect((await session.callTool("boxed", "where", {}, {})).output?.text).toBe("sandboxed=no");
      expect(calls).toBe(0);
      await session.close();
    } finally {
      await bridge.dispose();
    }
  });

  it("refuses a sandbox option that is not a function", () => {
    expect(() => new McpBridge([], { sandbox: "bwrap" as never })).toThrow("McpBridgeOptions.sandbox must be a function");
  });
});
