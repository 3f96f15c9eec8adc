import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collect, FIXTURE_HOST, FIXTURES, tempDir, withHttpServer, writeBundle } from "./helpers.js";

const temp = tempDir("conformance");
afterAll(() => temp.cleanup());

/** The conformance suite's command line, as installed for this package. */
const SUITE = path.join(path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json")), "dist", "index.js");
const EXPECTED_FAILURES = path.join(FIXTURES, "conformance-expected-failures.yml");

/** The scenarios of a tools server, as the suite names them: each must pass. */
const TOOLS_SERVER = [
  "server-initialize",
  "ping",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-error",
  "tools-call-image",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-with-progress",
  "logging-set-level",
  "tools-call-with-logging",
  "tools-call-elicitation",
  "elicitation-sep1034-defaults",
  "elicitation-sep1330-enums",
  "json-schema-2020-12",
  "dns-rebinding-protection",
  "server-sse-multiple-streams",
];

describe("the MCP conformance suite against serve --mcp --http", () => {
  it("M11 M9 T4 E2 M3 every server scenario passes but those expected-failures.yml names, each with its reason", async () => {
    const servers = path.join(temp.dir, "servers.json");
    writeFileSync(
      servers,
      JSON.stringify({ servers: { conf: { transport: "stdio", command: process.execPath, args: [path.join(FIXTURES, "conformance-server.mjs")] } } }),
    );
    // A v1 bundle: every tool the provider publishes, served under its published name, as the suite calls them.
    const bundle = writeBundle(path.join(temp.dir, "bundle"), JSON.stringify({ version: 1, mcpServers: ["conf"] }));
    const results = path.join(temp.dir, "results");
    const args = ["--bundle", bundle, "--servers", servers, "--approve", "yes", "--tool-names", "published", "--journal", path.join(temp.dir, "journal.db")];
    await withHttpServer(FIXTURE_HOST, args, async ({ port }) => {
      const suite = spawn(
        process.execPath,
        [SUITE, "server", "--url", `http://127.0.0.1:${port}/mcp`, "--suite", "all", "--expected-failures", EXPECTED_FAILURES, "-o", results],
        {
          cwd: temp.dir,
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      const ran = await collect(suite);
      // Exit 0: no failure outside the baseline, and no entry of the baseline that passes.
      expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    });
    const outcomes = scenarioOutcomes(results);
    const expectedFailures = [...readFileSync(EXPECTED_FAILURES, "utf8").matchAll(/^\s+- ([\w-]+)$/gm)].map((match) => match[1]!);
    for (const scenario of TOOLS_SERVER) expect(outcomes.get(scenario), scenario).toBe("passed");
    for (const scenario of expectedFailures) expect(outcomes.get(scenario), scenario).toBe("failed");
    const passed = [...outcomes.values()].filter((outcome) => outcome === "passed").length;
    expect(passed).toBe(outcomes.size - expectedFailures.length);
  });
});

/** Each scenario the suite ran, passed or failed as the suite judges it (a warning fails it too), from its results folder. */
function scenarioOutcomes(results: string): Map<string, "passed" | "failed"> {
  const outcomes = new Map<string, "passed" | "failed">();
  for (const folder of readdirSync(results)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T.*$/.exec(folder)?.[1];
    if (scenario === undefined) continue;
    const checks = JSON.parse(readFileSync(path.join(results, folder, "checks.json"), "utf8")) as { status: string }[];
    outcomes.set(scenario, checks.some((check) => check.status === "FAILURE" || check.status === "WARNING") ? "failed" : "passed");
  }
  return outcomes;
}
