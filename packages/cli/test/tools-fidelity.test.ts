import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_HOST, FIXTURES, runEntry, tempDir, writeBundle } from "./helpers.js";

const temp = tempDir("tools-fidelity");
const servers = path.join(temp.dir, "servers.json");
afterAll(() => temp.cleanup());
beforeAll(() => {
  writeFileSync(
    servers,
    JSON.stringify({ servers: { studio: { transport: "stdio", command: process.execPath, args: [path.join(FIXTURES, "task-and-display-server.mjs")] } } }),
  );
});

const bundleOf = (name: string, tools: readonly string[]): string => writeBundle(path.join(temp.dir, name), JSON.stringify({ version: 3, tools }));

describe("tools list / tools check and MCP tool metadata (M2, M5, M7)", () => {
  it("M7 M2 tools check lists a tool that requires MCP tasks as not offered, with why, and passes a bundle that does not select it", async () => {
    const bundle = bundleOf("offered", ["studio.index_folder", "studio.ping"]);
    const result = await runEntry(FIXTURE_HOST, ["tools", "check", "--bundle", bundle, "--servers", servers, "--json"]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(true);
    expect(report.tools.map((tool: { qualifiedName: string }) => tool.qualifiedName)).toEqual(["studio.index_folder", "studio.ping"]);
    expect(report.notOffered).toEqual([
      { qualifiedName: "studio.render_video", provider: "studio", reason: expect.stringContaining('execution.taskSupport "required"') },
    ]);
    const text = await runEntry(FIXTURE_HOST, ["tools", "check", "--bundle", bundle, "--servers", servers]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^not offered: studio\.render_video: it requires running as an MCP task/m);
  });

  it("M7 M2 tools check fails a bundle that selects a tool requiring MCP tasks, and says why it is not offered", async () => {
    const bundle = bundleOf("selects-task-tool", ["studio.ping", "studio.render_video"]);
    const result = await runEntry(FIXTURE_HOST, ["tools", "check", "--bundle", bundle, "--servers", servers, "--json"]);
    expect(result.code).toBe(1);
    const { ok, problems } = JSON.parse(result.stdout) as { ok: boolean; problems: { code: string; message: string }[] };
    expect(ok).toBe(false);
    expect(problems).toEqual([
      {
        code: "TOOL_NOT_PUBLISHED",
        message: expect.stringMatching(
          /^tools\.json: field "tools\[1\]": tool "studio\.render_video" is published by MCP provider "studio" but not offered: it requires running as an MCP task .*; deselect it$/,
        ),
      },
    ]);
  });

  it("M5 M7 tools list --json shows a discovered MCP tool's title, icons, _meta and annotations", async () => {
    const bundle = bundleOf("listed", ["studio.ping"]);
    const result = await runEntry(FIXTURE_HOST, ["tools", "list", "--bundle", bundle, "--discover", "--servers", servers, "--json"]);
    expect(result.code).toBe(0);
    const { tools, notOffered } = JSON.parse(result.stdout);
    expect(tools).toEqual([
      expect.objectContaining({
        qualifiedName: "studio.ping",
        kind: "mcp",
        discovered: true,
        title: "Ping",
        annotations: { readOnlyHint: true },
        // The javascript: icon is left out.
        icons: [{ src: "https://example.invalid/ping.png", mimeType: "image/png", sizes: ["32x32"] }],
        _meta: { "example/owner": "tests" },
      }),
    ]);
    expect(notOffered.map((tool: { qualifiedName: string }) => tool.qualifiedName)).toEqual(["studio.render_video"]);
  });
});
