import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { COWORKER, FIXTURE_HOST, FIXTURES, runEntry, runHost, tempDir, writeBundle } from "./helpers.js";

const temp = tempDir("tools");
afterAll(() => temp.cleanup());

describe("tools list / tools check (the built example host)", () => {
  it("tools list --json shows the registered natives and MCP providers", async () => {
    const result = await runHost(["tools", "list", "--json"]);
    expect(result.code).toBe(0);
    const listing = JSON.parse(result.stdout);
    expect(listing.natives.map((tool: { name: string }) => tool.name)).toEqual(["example.web_search", "notification.notify"]);
    expect(listing.natives[0]).toMatchObject({ alias: "example__web_search", classification: "external", placement: "host" });
    expect(listing.providers).toEqual([
      expect.objectContaining({ namespace: "acer", transport: "stdio", program: expect.stringMatching(/examples\/acer-mcp\/bin\/acer-mcp-launcher$/) }),
    ]);
  });

  it("M1 --servers servers.json registers more providers before the runtime freezes the registry; a conflict is an error", async () => {
    const { writeFileSync } = await import("node:fs");
    const servers = path.join(temp.dir, "servers.json");
    writeFileSync(servers, JSON.stringify({ servers: { local: { transport: "streamable_http", url: "http://127.0.0.1:9/mcp" } } }));
    const result = await runHost(["tools", "list", "--json", "--servers", servers]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).providers.map((provider: { namespace: string }) => provider.namespace)).toEqual(["acer", "local"]);
    const conflicting = path.join(temp.dir, "conflict.json");
    writeFileSync(conflicting, JSON.stringify({ servers: { example: { transport: "stdio", command: "/bin/true" } } }));
    const conflict = await runHost(["tools", "list", "--servers", conflicting]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/^error NAMESPACE_CONFLICT: .*example/m);
  });

  it("B6 tools check lists every problem of a tools.json that does not parse: each bad entry, and what resolving the rest finds", async () => {
    const bundle = writeBundle(
      path.join(temp.dir, "many-problems"),
      JSON.stringify({ version: 3, tools: ["example.web_serch", "nosuch.tool", "example.web_search", "notification"] }),
    );
    const result = await runHost(["tools", "check", "--bundle", bundle, "--json"]);
    expect(result.code).toBe(1);
    const { ok, problems } = JSON.parse(result.stdout) as { ok: boolean; problems: { code: string; message: string }[] };
    expect(ok).toBe(false);
    expect(problems.map((problem) => problem.code).sort()).toEqual(["NAMESPACE_UNKNOWN", "NAME_NOT_QUALIFIED", "TOOL_NOT_REGISTERED"]);
    expect(problems.find((problem) => problem.code === "TOOL_NOT_REGISTERED")!.message).toContain("example.web_serch");
  });

  it("B6 tools check lists a bad manifest's problem and tools.json's together", async () => {
    const bundle = writeBundle(path.join(temp.dir, "both-bad"), JSON.stringify({ version: 3, tools: ["example.web_serch", "bad"] }), "no front matter\n");
    const result = await runHost(["tools", "check", "--bundle", bundle, "--json"]);
    expect(result.code).toBe(1);
    const codes = (JSON.parse(result.stdout) as { problems: { code: string }[] }).problems.map((problem) => problem.code);
    expect(codes[0]).toMatch(/^MANIFEST_/);
    expect(codes.slice(1).sort()).toEqual(["NAME_NOT_QUALIFIED", "TOOL_NOT_REGISTERED"]);
  });

  it("B2 tools list --bundle shows exactly the selection; MCP tools are not discovered unless asked (no process starts)", async () => {
    const result = await runHost(["tools", "list", "--bundle", COWORKER, "--json"]);
    expect(result.code).toBe(0);
    const { tools } = JSON.parse(result.stdout);
    expect(tools.map((tool: { qualifiedName: string }) => tool.qualifiedName)).toEqual([
      "example.web_search",
      "notification.notify",
      "acer.acer_care_center_batterystatus_get",
    ]);
    expect(tools[0]).toMatchObject({
      alias: "example__web_search",
      kind: "native",
      version: "1.0.0",
      schemaFingerprint: expect.stringMatching(/^sha256:/),
      discovered: true,
    });
    expect(tools[2]).toMatchObject({ kind: "mcp", version: null, schemaFingerprint: null, discovered: false });
  });

  it("M2 tools check --bundle discovers the acer provider, resolves every selected tool and exits 0", async () => {
    const result = await runHost(["tools", "check", "--bundle", COWORKER, "--json"]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(true);
    expect(report.tools[2]).toMatchObject({
      qualifiedName: "acer.acer_care_center_batterystatus_get",
      kind: "mcp",
      version: expect.stringMatching(/^sha256:/),
      discovered: true,
    });
  });

  it("N7 tools check lists every problem of a broken bundle (not only the first) and exits 1", async () => {
    const bundle = writeBundle(
      path.join(temp.dir, "broken"),
      JSON.stringify({ version: 3, tools: ["example.web_search", "example.missing", "nowhere.tool", "acer.battery"] }),
    );
    const result = await runHost(["tools", "check", "--bundle", bundle]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/problem TOOL_NOT_REGISTERED: .*example\.missing/);
    expect(result.stdout).toMatch(/problem NAMESPACE_UNKNOWN: .*nowhere\.tool/);
    expect(result.stdout).toMatch(/problem TOOL_NOT_PUBLISHED: .*acer\.battery.*acer_care_center_batterystatus_get/);
    expect(result.stdout).toContain("3 problem(s)");
  });

  it("B6 tools check reports a malformed tools.json and a missing manifest with the file named, exit 1", async () => {
    const badJson = writeBundle(path.join(temp.dir, "bad-json"), "{ not json");
    const result = await runHost(["tools", "check", "--bundle", badJson, "--json"]);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({ code: "TOOLS_JSON_INVALID_JSON", message: expect.stringContaining("tools.json") });

    const noManifest = path.join(temp.dir, "no-manifest");
    writeBundle(noManifest, JSON.stringify({ version: 3, tools: [] }));
    const { rmSync } = await import("node:fs");
    rmSync(path.join(noManifest, "manifest.md"));
    const missing = await runHost(["tools", "check", "--bundle", noManifest]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/problem MANIFEST_MISSING: .*manifest\.md/);
  });
});

describe("tools check names entries by their index in tools.json", () => {
  /** `tools check --json` of a fixture-host bundle: each problem's code and the fields it names. */
  async function check(name: string, tools: unknown[], args: string[] = []) {
    const bundle = writeBundle(path.join(temp.dir, name), JSON.stringify({ version: 3, tools }));
    const result = await runEntry(FIXTURE_HOST, ["tools", "check", "--bundle", bundle, "--json", ...args]);
    expect(result.code).toBe(1);
    const { problems } = JSON.parse(result.stdout) as { problems: { code: string; message: string }[] };
    return problems.map((problem) => `${problem.code} ${[...problem.message.matchAll(/"(tools\[\d+\])"/g)].map((match) => match[1]).join(" ")}`.trim());
  }

  it("B6 after a provider's tools were left out (it could not start), resolution problems name the file's index", async () => {
    const { writeFileSync } = await import("node:fs");
    const servers = path.join(temp.dir, "down-servers.json");
    writeFileSync(servers, JSON.stringify({ servers: { down: { transport: "stdio", command: path.join(temp.dir, "no-such-program") } } }));
    const problems = await check("down-first", ["down.tool_a", "down.tool_b", "fixture.whoami", "fixture.nope", "nope.x"], ["--servers", servers]);
    expect(problems).toContain("TOOL_NOT_REGISTERED tools[3]");
    expect(problems).toContain("NAMESPACE_UNKNOWN tools[4]");
  });

  it("B6 with both bad entries and a provider that could not start, the two reductions map back to the file's index", async () => {
    const { writeFileSync } = await import("node:fs");
    const servers = path.join(temp.dir, "down-servers-both.json");
    writeFileSync(servers, JSON.stringify({ servers: { down: { transport: "stdio", command: path.join(temp.dir, "no-such-program") } } }));
    const problems = await check("both", ["", "down.a", "fixture.whoami", "down.b", "fixture.nope", 3, "nope.x"], ["--servers", servers]);
    expect(problems).toEqual(
      expect.arrayContaining(["TOOLS_JSON_INVALID tools[0]", "TOOLS_JSON_INVALID tools[5]", "TOOL_NOT_REGISTERED tools[4]", "NAMESPACE_UNKNOWN tools[6]"]),
    );
  });

  it("B6 after bad entries of a tools.json that did not parse, resolving the rest names the file's index", async () => {
    const problems = await check("bad-first", ["fixture.whoami", "", 5, "fixture.whoami", "fixture.nope", "nope.x"]);
    expect(problems.sort()).toEqual(
      [
        "TOOLS_JSON_DUPLICATE tools[3] tools[0]",
        "NAMESPACE_UNKNOWN tools[5]",
        "TOOLS_JSON_INVALID tools[1]",
        "TOOLS_JSON_INVALID tools[2]",
        "TOOL_NOT_REGISTERED tools[4]",
      ].sort(),
    );
  });

  it("E6 tools check never prints a published tool name carrying the provider's configured secret", async () => {
    const { writeFileSync } = await import("node:fs");
    const secret = "zq7kw3";
    const servers = path.join(temp.dir, "careless.json");
    writeFileSync(
      servers,
      JSON.stringify({
        servers: {
          careless: { transport: "stdio", command: process.execPath, args: [path.join(FIXTURES, "secret-named-server.mjs")], env: { NAME_SECRET: secret } },
        },
      }),
    );
    const missing = writeBundle(path.join(temp.dir, "careless-missing"), JSON.stringify({ version: 3, tools: ["careless.lookup"] }));
    const named = writeBundle(path.join(temp.dir, "careless-whole"), JSON.stringify({ version: 1, mcpServers: ["careless"] }));
    const runs = [
      await runHost(["tools", "check", "--servers", servers, "--bundle", missing]),
      await runHost(["tools", "check", "--servers", servers, "--bundle", missing, "--json"]),
      await runHost(["tools", "check", "--servers", servers, "--bundle", named]),
      await runHost(["tools", "check", "--servers", servers, "--bundle", named, "--json"]),
    ];
    expect(runs.map((run) => run.code)).toEqual([1, 1, 0, 0]);
    expect(runs[0]!.stdout).toContain("lookup_[redacted]");
    expect(runs[2]!.stdout).toContain("careless.lookup_[redacted]");
    for (const run of runs) expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it("E6 credentials in servers.json args are masked by tools list (text and --json), and loading warns about them", async () => {
    const { writeFileSync } = await import("node:fs");
    const servers = path.join(temp.dir, "args-credentials.json");
    const args = ["serve", "--db", "postgres://app:pw-in-args-1@db/app", "--token=tok-in-args-2", "--api-key", "key-in-args-3"];
    writeFileSync(servers, JSON.stringify({ servers: { leaky: { transport: "stdio", command: "/bin/true", args } } }));
    const text = await runHost(["tools", "list", "--servers", servers]);
    const json = await runHost(["tools", "list", "--json", "--servers", servers]);
    expect([text.code, json.code]).toEqual([0, 0]);
    expect(text.stdout).toContain("/bin/true serve --db postgres://app:[redacted]@db/app --token=[redacted] --api-key [redacted]");
    expect(JSON.parse(json.stdout).providers.find((provider: { namespace: string }) => provider.namespace === "leaky").args).toEqual([
      "serve",
      "--db",
      "postgres://app:[redacted]@db/app",
      "--token=[redacted]",
      "--api-key",
      "[redacted]",
    ]);
    for (const run of [text, json]) {
      expect(run.stderr).toMatch(/warning: --servers .*server "leaky" passes credentials in "args".*move them to "env"/);
      for (const secret of ["pw-in-args-1", "tok-in-args-2", "key-in-args-3"]) expect(run.stdout + run.stderr).not.toContain(secret);
    }
  });
});
