import { spawn } from "node:child_process";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, describe, expect, it } from "vitest";
import { collect, FIXTURE_HOST, tempDir, waitForOutput, writeBundle } from "./helpers.js";

const temp = tempDir("mcp-lines");
afterAll(() => temp.cleanup());
const BUNDLE = () => writeBundle(path.join(temp.dir, "whoami"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
/** Past the 10 MiB a request line may have on stdio. */
const OVERSIZED = "x".repeat(11 * 1024 * 1024);

describe("serve --mcp on stdio answers every request line", () => {
  it("M1 a request line over 10 MiB is answered with an error under its id, and the next request is served", async () => {
    const client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [FIXTURE_HOST, "serve", "--mcp", "--bundle", BUNDLE(), "--approve", "yes", "--journal", path.join(temp.dir, "big.db")],
        stderr: "ignore",
      }),
    );
    try {
      // The SDK client writes the id last: the server finds it at the line's end.
      const call = client.callTool({ name: "fixture__whoami", arguments: { blob: OVERSIZED } }, undefined, { timeout: 20_000 });
      await expect(call).rejects.toMatchObject({ code: -32600, message: expect.stringContaining("at most 10485760 bytes (10 MiB)") });
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(["fixture__whoami"]);
    } finally {
      await client.close();
    }
  });

  it("M1 a line that is not JSON gets a parse error; an oversized one with its id first gets that id back", async () => {
    const child = spawn(process.execPath, [FIXTURE_HOST, "serve", "--mcp", "--bundle", BUNDLE(), "--journal", path.join(temp.dir, "raw.db")], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "ignore"],
    });
    const done = collect(child);
    const send = (text: string) => child.stdin.write(`${text}\n`);
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
      }),
    );
    await waitForOutput(child.stdout, (text) => text.includes('"id":1'));
    send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    send("{not json");
    send(`{"jsonrpc":"2.0","id":"big-7","method":"tools/call","params":{"name":"fixture__whoami","arguments":{"blob":"${OVERSIZED}"}}}`);
    send(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/list" }));
    await waitForOutput(child.stdout, (text) => text.includes('"id":8'));
    child.stdin.end();
    const answers = (await done).stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: unknown; error?: { code: number; message: string }; result?: unknown });
    expect(answers).toContainEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.stringMatching(/^parse error: the line is not JSON/) } });
    expect(answers.find((answer) => answer.id === "big-7")).toMatchObject({ error: { code: -32600 } });
    expect(answers.find((answer) => answer.id === 8)).toMatchObject({ result: { tools: [{ name: "fixture__whoami" }] } });
  });
});

describe("call refuses what the user gave, in the user's words", () => {
  it("E5 call with arguments nested 20,000 levels deep gets the nesting message, not a stack overflow", async () => {
    const { runEntry } = await import("./helpers.js");
    const deep = `${'{"a":'.repeat(20_000)}{}${"}".repeat(20_000)}`;
    const ran = await runEntry(FIXTURE_HOST, ["call", "fixture.whoami", "--approve", "yes", "--args", deep, "--journal", path.join(temp.dir, "deep.db")]);
    expect(ran.code).toBe(1);
    expect(ran.stdout + ran.stderr).toMatch(/arguments nest deeper than 128 levels/);
    expect(ran.stdout + ran.stderr).not.toMatch(/call stack/);
  });

  it('E5 call "" says the tool name is empty, not that a tools.json the user never wrote is wrong', async () => {
    const { runEntry } = await import("./helpers.js");
    const ran = await runEntry(FIXTURE_HOST, ["call", "", "--journal", path.join(temp.dir, "empty.db")]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^error NAME_EMPTY: call: the tool name is empty; give the qualified name of a tool/m);
    expect(ran.stderr).not.toMatch(/tools\.json/);
  });
});
