import { ToolRegistry, type ProviderSandboxPolicy } from "@openworker/registry";
import { describe, expect, it } from "vitest";
import { Runtime } from "../src/index.js";
import { ScriptedProvider } from "../src/testing/index.js";
import { scratchEach, writeBundle, writeHostEntry } from "./support/harness.js";

describe("sandbox policy in the execution identity", () => {
  const space = scratchEach();

  async function identityWith(placement: "host" | "sandbox" | undefined, sandbox?: ProviderSandboxPolicy): Promise<{ identity: string }> {
    const registry = new ToolRegistry();
    registry.registerMcp({
      namespace: "files",
      program: "/opt/files/mcp",
      ...(placement === undefined ? {} : { placement }),
      ...(sandbox === undefined ? {} : { sandbox }),
    });
    const runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: `${space.dir}/journal.db` },
      hostEntry: writeHostEntry(space.dir),
      models: [new ScriptedProvider([])],
    });
    try {
      const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["files.read"]) });
      return { identity: session.executionIdentity };
    } finally {
      await runtime.close();
    }
  }

  it("A2 A4 a changed sandbox policy is a new execution identity; the same policy keeps it; host placement is unchanged by the field's existence", async () => {
    const strict = await identityWith("sandbox", { read: ["/srv/in"] });
    expect((await identityWith("sandbox", { read: ["/srv/in"] })).identity).toBe(strict.identity);
    const others = [
      await identityWith("sandbox", { read: ["/srv/in", "/srv/more"] }),
      await identityWith("sandbox", { read: ["/srv/in"], write: ["/srv/out"] }),
      await identityWith("sandbox", { read: ["/srv/in"], network: { allow: ["api.example.com"] } }),
      await identityWith("sandbox"),
      await identityWith("host"),
    ].map((item) => item.identity);
    expect(new Set([strict.identity, ...others]).size).toBe(6);
    // Host placement, said or not, is the identity it always was.
    expect((await identityWith(undefined)).identity).toBe(others[4]);
  });
});
