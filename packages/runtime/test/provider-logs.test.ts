import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { describe, expect, it } from "vitest";
import { Runtime, type RuntimeEvent } from "../src/index.js";
import { scratchEach, writeBundle, writeHostEntry } from "./support/harness.js";

const server = path.resolve(import.meta.dirname, "../../mcp-bridge/test/fixtures/logging-server.mjs");
const SECRET = "runtime-log-secret-4410";
let runtime: Runtime | undefined;
const space = scratchEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe("MCP providers' log messages", () => {
  it("M10 E6 become the session's PROVIDER_LOG diagnostics, redacted, never model text", async () => {
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "logs", program: process.execPath, args: [server], env: { LOG_SECRET: SECRET } });
    runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: path.join(space.dir, "journal.db") },
      hostEntry: writeHostEntry(space.dir),
    });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["logs.chatty"]), policy: { mode: "bypass" } });
    const events: RuntimeEvent[] = [];
    session.subscribe((event) => events.push(event));
    const report = await session.callTool("logs.chatty", { count: 3 });
    expect(report.outcome).toBe("succeeded");
    await expect.poll(() => events.filter((event) => event.type === "diagnostic" && event.code === "PROVIDER_LOG").length).toBe(3);
    const logs = events.filter((event): event is Extract<RuntimeEvent, { type: "diagnostic" }> => event.type === "diagnostic" && event.code === "PROVIDER_LOG");
    expect(logs[2]).toMatchObject({ provider: "logs", message: "logs warning: step 2" });
    expect(JSON.stringify(logs)).not.toContain(SECRET);
    expect(report.modelText).not.toContain("step 2");
    await session.close();
  });
});
