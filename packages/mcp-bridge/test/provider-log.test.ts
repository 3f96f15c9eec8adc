import { afterAll, describe, expect, it } from "vitest";
import { McpBridge, type McpProviderLog } from "../src/index.js";
import { eventually, fixture } from "./helpers.js";

const SECRET = "log-secret-CANARY-7731";
const logs: McpProviderLog[] = [];
const bridge = new McpBridge(
  [
    { transport: "stdio", namespace: "legacy", program: process.execPath, args: [fixture("logging-server.mjs")], env: { LOG_SECRET: SECRET } },
    { transport: "stdio", namespace: "modern", program: process.execPath, args: [fixture("modern-only.mjs")] },
  ],
  { onProviderLog: (event) => logs.push(event) },
);
afterAll(async () => {
  await bridge.dispose();
  await bridge.joinCleanup();
});

describe("providers' log messages", () => {
  it("M10 E6 reach the host's listener bounded: cut to 2 KiB, secrets removed, a flood dropped and counted, never in the model text", async () => {
    const session = bridge.openSession("logs");
    await session.discover(["legacy"]);
    const result = await session.callTool("legacy", "chatty", { count: 60 }, {});
    expect(result.output?.text).toBe("logged 60");
    const mine = await eventually(() => {
      const seen = logs.filter((event) => event.namespace === "legacy");
      return seen.length >= 20 ? seen : undefined;
    });
    expect(mine[0]!.message.length).toBeLessThan(2_100);
    expect(mine[0]!.message).toContain("(10000 characters)");
    expect(mine[1]!.message).not.toContain(SECRET);
    expect(mine[2]).toMatchObject({ level: "warning", logger: "chatty", message: "step 2" });
    // 60 messages in well under a second: at most 20 pass, the rest are dropped.
    expect(mine.length).toBeLessThanOrEqual(20);
    expect(JSON.stringify(result)).not.toContain("step 2");
    await session.close();
  });

  it("M6 M10 a 2026-07-28 server logs at the level each call asks for", async () => {
    const session = bridge.openSession("modern-logs");
    await session.discover(["modern"]);
    expect((await session.callTool("modern", "chatty", {}, {})).output?.text).toBe("logged");
    await eventually(() => (logs.some((event) => event.namespace === "modern" && event.message === "a modern log message") ? true : undefined));
    await session.close();
  });

  it("M10 sampling and roots are not offered: a server that asks anyway is refused", async () => {
    const session = bridge.openSession("deprecated");
    await session.discover(["legacy"]);
    for (const tool of ["ask_sampling", "ask_roots"]) {
      const result = await session.callTool("legacy", tool, {}, {});
      expect(result.output?.text, tool).toMatch(/^refused: .*(does not support|not found|Method not found)/i);
    }
    await session.close();
  });
});
