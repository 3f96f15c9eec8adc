import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { Runtime } from "@openworker/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { RuntimeTelemetry } from "../src/index.js";
import { OtlpReceiver } from "./support/otlp-receiver.js";
import { otelSdk } from "./support/scenario.js";

// A real stdio MCP server (SDK 1.x) whose tool asks the user mid-call with `elicitInput`.
const asker = path.resolve(import.meta.dirname, "../../mcp-bridge/test/fixtures/elicit-legacy.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "ow-otel-elicit-"));
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("elicitation in the call's span", () => {
  it("M9 E6 the call span marks what the provider asked and how it was answered, never the message or the values", async () => {
    const receiver = await OtlpReceiver.start();
    cleanups.push(
      () => receiver.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
    const sdk = otelSdk(receiver.url);
    cleanups.push(() => sdk.shutdown());
    const registry = new ToolRegistry();
    registry.registerMcp({ namespace: "asker", program: process.execPath, args: [asker] });
    const hostEntry = path.join(dir, "host.js");
    writeFileSync(hostEntry, "// host\n");
    const runtime = await Runtime.openWithRegistry(registry, {
      workspace: dir,
      journal: { path: path.join(dir, "journal.db") },
      hostEntry,
      elicitor: () => ({ action: "accept", content: { name: "Secret Name 42" }, who: "ana" }),
    });
    cleanups.push(() => runtime.close());
    const bundle = path.join(dir, "bundle");
    mkdirSync(bundle);
    writeFileSync(path.join(bundle, "manifest.md"), "---\nname: Asker\n---\nYou ask.\n");
    writeFileSync(path.join(bundle, "tools.json"), JSON.stringify({ version: 3, tools: ["asker.ask"] }));
    const session = await runtime.openSession({ bundle, policy: { mode: "bypass" } });
    const stop = new RuntimeTelemetry({ tracerProvider: sdk.tracerProvider }).instrument(session);
    const report = await session.callTool("asker.ask", {});
    stop();
    await sdk.flush();
    expect(report.outcome).toBe("succeeded");
    const call = receiver.spans().find((span) => span.name === "execute_tool asker.ask");
    expect(call?.events.filter((event) => event.name.startsWith("openworker.elicitation.")).map((event) => [event.name, event.attributes])).toEqual([
      ["openworker.elicitation.asked", { "openworker.elicitation.mode": "form" }],
      ["openworker.elicitation.answered", { "openworker.elicitation.action": "accept", "openworker.elicitation.by": "person" }],
    ]);
    expect(receiver.everything).not.toContain("Your name?");
    expect(receiver.everything).not.toContain("Secret Name 42");
  });
});
