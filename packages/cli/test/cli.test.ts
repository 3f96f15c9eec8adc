import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { ToolRegistry } from "@openworker/registry";
import { codeTool, type ToolContext } from "@openworker/tools-sdk";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxLauncher } from "@openworker/mcp-bridge";
import { hintFor } from "../src/cli/errors.js";
import { CLI_ERROR_CODES, EXIT_CODES, runCli } from "../src/index.js";
import { FIXTURES, writeBundle } from "./helpers.js";

const COMMAND_WORDS = [
  ["tools", "list"],
  ["tools", "check"],
  ["call"],
  ["run"],
  ["serve"],
  ["journal", "sessions"],
  ["journal", "show"],
  ["journal", "verify"],
  ["journal", "export"],
  ["journal", "approvals"],
  ["journal", "revoke-approvals"],
];

function registry(): ToolRegistry {
  const tools = new ToolRegistry();
  tools.register(codeTool("demo.echo", "Echo.", { type: "object" }, (args) => ({ ok: args })));
  return tools;
}

async function cli(
  argv: string[],
  options: { tty?: boolean; stderrTty?: boolean; env?: NodeJS.ProcessEnv; tools?: ToolRegistry; sandbox?: SandboxLauncher } = {},
) {
  const stdout = Object.assign(new PassThrough(), { isTTY: options.tty ?? false });
  const stderr = Object.assign(new PassThrough(), { isTTY: options.stderrTty ?? options.tty ?? false });
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await runCli(options.tools ?? registry(), {
    argv,
    programName: "host",
    env: options.env ?? {},
    stdout,
    stderr,
    stdin: new PassThrough(),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  return { code, stdout: out, stderr: err };
}

describe("command line", () => {
  it("every command has --help, exiting 0 with its usage", async () => {
    for (const words of COMMAND_WORDS) {
      const result = await cli([...words, "--help"]);
      expect(result.code, words.join(" ")).toBe(EXIT_CODES.ok);
      expect(result.stdout).toContain(`usage: host ${words.join(" ")}`);
      expect(result.stdout).toContain("exit codes: 0 ok, 1 failed");
    }
    const top = await cli(["--help"]);
    expect(top.code).toBe(0);
    for (const words of COMMAND_WORDS) expect(top.stdout).toContain(words.join(" "));
  });

  it("an unknown command is a usage error: exit 2, one error line with its code and a hint", async () => {
    const result = await cli(["frobnicate"]);
    expect(result.code).toBe(EXIT_CODES.usage);
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^error CLI_USAGE: unknown command "frobnicate"/);
    expect(lines[1]).toMatch(/^hint: /);
  });

  it("an unknown option or a missing value is a usage error (exit 2)", async () => {
    expect((await cli(["tools", "list", "--frob"])).code).toBe(EXIT_CODES.usage);
    const missing = await cli(["tools", "check"]);
    expect(missing.code).toBe(EXIT_CODES.usage);
    expect(missing.stderr).toContain("tools check needs --bundle DIR");
    const choice = await cli(["call", "demo.echo", "--approve", "maybe"]);
    expect(choice.code).toBe(EXIT_CODES.usage);
    expect(choice.stderr).toContain("--approve must be one of ask, yes, no");
  });

  it("colour only on a terminal: never with NO_COLOR or --json", async () => {
    const ansi = new RegExp(`${String.fromCharCode(27)}\\[`);
    expect((await cli(["tools", "list"], { tty: true })).stdout).toMatch(ansi);
    expect((await cli(["tools", "list"], { tty: true, env: { NO_COLOR: "1" } })).stdout).not.toMatch(ansi);
    const json = await cli(["tools", "list", "--json"], { tty: true });
    expect(json.stdout).not.toMatch(ansi);
    expect(JSON.parse(json.stdout).natives[0].name).toBe("demo.echo");
    expect((await cli(["tools", "list"], { tty: false })).stdout).not.toMatch(ansi);
  });

  it("global options may come before the command words", async () => {
    const result = await cli(["--workspace", "/tmp", "tools", "list", "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).natives).toHaveLength(1);
  });
});

describe("what the command line refuses instead of ignoring", () => {
  const temp = mkdtempSync(path.join(os.tmpdir(), "ow-cli-refuse-"));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));
  it("an options error hints at the command's own help, not the program's", async () => {
    const result = await cli(["tools", "list", "--frob"]);
    expect(result.code).toBe(EXIT_CODES.usage);
    expect(result.stderr).toContain("hint: run `host tools list --help` for the options");
  });

  it("options that do not apply to serve's mode are usage errors, not silently ignored", async () => {
    const policy = await cli(["serve", "--stdio", "--policy", "p.json"]);
    expect(policy.code).toBe(EXIT_CODES.usage);
    expect(policy.stderr).toContain("serve --stdio: --policy applies to serve --mcp only");
    const script = await cli(["serve", "--mcp", "--bundle", "b", "--script", "s.json"]);
    expect(script.stderr).toContain("serve --mcp: --script applies to serve --stdio only");
    const discover = await cli(["tools", "list", "--discover"]);
    expect(discover.code).toBe(EXIT_CODES.usage);
    expect(discover.stderr).toContain("--discover applies to a bundle's selection");
  });

  it("a script's tool call with an unknown field names the step and the field", async () => {
    const { parseScript } = await import("../src/index.js");
    expect(() => parseScript([{ toolCalls: [{ name: "demo__echo", args: {} }] }], "s.json")).toThrow(
      /s\.json: step 0, toolCalls\[0\] has unknown field "args" \(allowed: name, arguments\)/,
    );
  });

  it("A1 a policy classifying a tool under a class no rule names is refused (a typo would silently ask)", async () => {
    const { parsePolicy } = await import("../src/index.js");
    expect(() => parsePolicy({ classifications: { "demo.echo": "read_only" }, rules: { "read-only": "allow" } }, "p.json")).toThrow(
      /p\.json: classifications\["demo\.echo"\] is "read_only", which no rule names \(rules: read-only\)/,
    );
    expect(() => parsePolicy({ classifications: { echo: "read_only" }, rules: { read_only: "allow" } }, "p.json")).toThrow(
      /"echo" is not a qualified tool name/,
    );
    expect(parsePolicy({ classifications: { "demo.echo": "external" }, rules: { read_only: "allow" } }, "p.json")).toMatchObject({
      classifications: { "demo.echo": "external" },
    });
  });

  it("A1 B6 a --policy (or --script) file that repeats a key is refused, naming the file, the key and where: JSON.parse would keep the last", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ow-cli-dup-"));
    try {
      const policy = path.join(dir, "policy.json");
      writeFileSync(policy, '{"name":"locked-down","rules":{"external":"deny","read_only":"allow","external":"allow"}}');
      const called = await cli(["call", "demo.echo", "--policy", policy, "--approve", "no", "--workspace", dir]);
      expect(called.code).toBe(EXIT_CODES.failed);
      expect(called.stderr).toContain(`error CLI_POLICY_INVALID: ${policy}: key "external" appears twice in "rules"; give each once`);
      expect(called.stdout).toBe("");
      const script = path.join(dir, "script.json");
      writeFileSync(script, '[{"text":"a","text":"b"}]');
      const ran = await cli([
        "run",
        "--bundle",
        writeBundle(path.join(dir, "bundle"), '{"version":3,"tools":["demo.echo"]}'),
        "--script",
        script,
        "--message",
        "hi",
        "--workspace",
        dir,
      ]);
      expect(ran.stderr).toContain(`error CLI_SCRIPT_INVALID: ${script}: key "text" appears twice in "[0]"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("--http takes a decimal port only", async () => {
    const result = await cli(["serve", "--mcp", "--bundle", temp, "--http", "0x10"]);
    expect(result.code).toBe(EXIT_CODES.usage);
    expect(result.stderr).toContain('--http must be a port number 0-65535 (0 picks a free port), got "0x10"');
  });

  it("M1/N8 --servers with a registry a runtime already froze is an error naming the file, not silently skipped", async () => {
    const servers = path.join(temp, "servers.json");
    writeFileSync(servers, JSON.stringify({ servers: { notes: { transport: "stdio", command: process.execPath } } }));
    const tools = registry();
    expect(
      (await cli(["tools", "check", "--bundle", writeBundle(path.join(temp, "frozen-bundle"), '{"version":3,"tools":["demo.echo"]}')], { tools })).code,
    ).toBe(EXIT_CODES.ok);
    expect(tools.frozen).toBe(true);
    const again = await cli(["tools", "list", "--servers", servers], { tools });
    expect(again.code).toBe(EXIT_CODES.failed);
    expect(again.stderr).toMatch(/^error REGISTRY_FROZEN: --servers .*servers\.json: cannot register its providers: a runtime already opened this registry/m);
    const missing = await cli(["tools", "list", "--servers", path.join(temp, "nope.json")], { tools });
    expect(missing.stderr).toMatch(/^error REGISTRY_FROZEN: --servers .*nope\.json/m);
  });

  it("errors from a servers entry or a tools.json name hint at what to fix, not at --help", async () => {
    const servers = path.join(temp, "bad-servers.json");
    writeFileSync(servers, JSON.stringify({ servers: { svc: { transport: "streamable_http", url: "http://example.com/mcp" } } }));
    const remote = await cli(["tools", "list", "--servers", servers]);
    expect(remote.stderr).toMatch(/^error PROVIDER_URL_NOT_LOCAL: .*bad-servers\.json/m);
    expect(remote.stderr).toContain("hint: fix the MCP provider the message names: its entry in the --servers file");
    const bundle = writeBundle(path.join(temp, "bad-name"), '{"version":3,"tools":["demo.echo two"]}');
    const run = await cli(["run", "--bundle", bundle, "--message", "hi", "--script", path.join(temp, "never-read.json")]);
    expect(run.stderr).toMatch(/^error NAME_INVALID_CHARACTER: /m);
    expect(run.stderr).toContain("`host tools check --bundle DIR` lists every problem of a bundle");
    expect(run.stderr).not.toContain("--help");
  });

  it("B5 a tool's SCHEMA_INVALID, and any other error that is not a usage problem, hints at tools check, never at --help", async () => {
    const tools = registry();
    tools.register({
      descriptor: () => ({
        name: "demo.bad_schema",
        description: "Its schema does not compile.",
        version: "1",
        inputSchema: { type: "object", properties: { n: { type: "no-such-type" } } },
      }),
      call: async () => ({ json: null }),
    });
    const called = await cli(["call", "demo.bad_schema", "--approve", "yes", "--workspace", temp, "--journal", path.join(temp, "bad-schema.db")], { tools });
    expect(called.code).toBe(EXIT_CODES.failed);
    expect(called.stderr).toMatch(/^error SCHEMA_INVALID: .*demo\.bad_schema/m);
    expect(called.stderr).toContain("hint: a tool or the bundle's selection is at fault, not the command line: `host tools check --bundle DIR`");
    expect(called.stderr).not.toContain("--help");
    // Codes with no hint of their own (runtime faults, codes added later) do not get the usage hint either.
    for (const code of ["SESSION_CLOSED", "CALL_PIPELINE_FAILED", "SOME_FUTURE_CODE", "CLI_INTERNAL"])
      expect(hintFor(code, "host", "call"), code).not.toContain("--help");
    expect(hintFor("CLI_USAGE", "host", "call")).toBe("run `host call --help` for the options");
  });

  it("B2 N2 call given a tool's model alias names the qualified name it stands for", async () => {
    const bundle = writeBundle(path.join(temp, "echo-bundle"), '{"version":3,"tools":["demo.echo"]}');
    const selected = await cli(["call", "demo__echo", "--bundle", bundle, "--workspace", temp, "--journal", path.join(temp, "alias.db")]);
    expect(selected.code).toBe(EXIT_CODES.failed);
    expect(selected.stderr).toMatch(
      /^error CLI_TOOL_NOT_SELECTED: .*the bundle does not select "demo__echo"; did you mean "demo\.echo"\? \(demo__echo is its model alias; call takes the qualified name\)$/m,
    );
    const unknown = await cli(["call", "demo__other", "--bundle", bundle, "--workspace", temp, "--journal", path.join(temp, "alias.db")]);
    expect(unknown.stderr).toMatch(
      /^error CLI_TOOL_NOT_SELECTED: .*the bundle does not select "demo__other"; only the tools it selects can be called: add it to tools.json, or call without --bundle$/m,
    );
    // Without --bundle the name is the selection: a registered tool's alias is named as such too.
    const direct = await cli(["call", "demo__echo", "--workspace", temp, "--journal", path.join(temp, "alias.db")]);
    expect(direct.stderr).toMatch(/^error NAME_NOT_QUALIFIED: tool name "demo__echo" is not qualified; did you mean "demo\.echo"\?/m);
  });

  it("E6 text from a tool reaches the terminal with its control characters escaped; the CLI's own colours pass", async () => {
    const sneaky = (): ToolRegistry => {
      const tools = new ToolRegistry();
      tools.register({
        descriptor: () => ({ name: "demo.sneaky", description: "Reports progress with escape sequences.", version: "1", inputSchema: { type: "object" } }),
        call: async (context: ToolContext) => {
          context.progress.report({ message: "\u001b[2J\u001b]52;c;ZXZpbA==\u0007fake\rline\u009b1A" });
          return { json: { ok: true } };
        },
      });
      return tools;
    };
    const plain = await cli(["call", "demo.sneaky", "--approve", "yes"], { tools: sneaky() });
    expect(plain.code, plain.stderr).toBe(EXIT_CODES.ok);
    expect(plain.stderr).toContain("\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007fake\\u000dline\\u009b1A");
    expect([...plain.stderr].filter((char) => char !== "\n" && (char < " " || (char >= "\u007f" && char <= "\u009f")))).toEqual([]);
    const coloured = await cli(["call", "demo.sneaky", "--approve", "yes"], { tools: sneaky(), tty: true });
    expect(coloured.stderr).toContain("\u001b[2m"); // the CLI's own dim
    expect(coloured.stderr).toContain("\\u001b[2J");
    expect(coloured.stderr).not.toContain("\u001b[2J");
  });

  it("colour is decided per stream: errors redirected to a file get no escape codes", async () => {
    const ansi = new RegExp(`${String.fromCharCode(27)}\\[`);
    const result = await cli(["frobnicate"], { tty: true, stderrTty: false });
    expect(result.stderr).toMatch(/^error CLI_USAGE/);
    expect(result.stderr).not.toMatch(ansi);
    expect((await cli(["frobnicate"], { tty: true })).stderr).toMatch(ansi);
  });
});

describe("what help and errors say matches what the CLI does", () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "ow-cli-docs-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const optionLine = (help: string, option: string) => help.split("\n").find((line) => line.trimStart().startsWith(`--${option} `)) ?? "";

  it("A1 serve --help gives --approve its own default (no; ask needs --http and a terminal), while call and run ask by default", async () => {
    const serve = optionLine((await cli(["serve", "--help"])).stdout, "approve");
    expect(serve).toContain("no (default)");
    expect(serve).toContain("ask (needs --http and a terminal)");
    expect(serve).not.toContain("ask on the terminal (default)");
    for (const command of ["call", "run"])
      expect(optionLine((await cli([command, "--help"])).stdout, "approve"), command).toContain("ask on the terminal (default)");
    // What the help says is what serve --mcp does: ask on stdio is a usage error.
    const ask = await cli(["serve", "--mcp", "--bundle", scratch, "--approve", "ask"]);
    expect(ask.code).toBe(EXIT_CODES.usage);
    expect(ask.stderr).toContain("--approve ask needs a terminal");
  });

  it("global --help names no default model provider: run without --script or --base-url is CLI_MODEL_MISSING", async () => {
    const provider = optionLine((await cli(["--help"])).stdout, "provider");
    expect(provider).toContain("none by default");
    expect(provider).not.toContain("(default)");
    const bundle = writeBundle(path.join(scratch, "echo"), '{"version":3,"tools":["demo.echo"]}');
    const run = await cli(["run", "--bundle", bundle, "--message", "hi", "--workspace", scratch]);
    expect(run.stderr).toMatch(/^error CLI_MODEL_MISSING: /m);
  });

  it("an invalid --session-id is a usage error naming the option (exit 2), found before the runtime opens the journal", async () => {
    const bundle = writeBundle(path.join(scratch, "session-id"), '{"version":3,"tools":["demo.echo"]}');
    const journal = path.join(scratch, "session-id.db");
    const script = path.join(scratch, "answer.json");
    writeFileSync(script, '[{"text":"ok"}]');
    for (const bad of ["bad id", ".dot-first", "x".repeat(129), "ses/1"]) {
      const result = await cli([
        "run",
        "--bundle",
        bundle,
        "--script",
        script,
        "--message",
        "hi",
        "--session-id",
        bad,
        "--workspace",
        scratch,
        "--journal",
        journal,
      ]);
      expect(result.code, bad).toBe(EXIT_CODES.usage);
      expect(result.stderr).toMatch(
        /^error CLI_USAGE: --session-id ".*" is not a session id: use 1–128 letters, digits and \. _ : - \(starting with a letter or digit\)/m,
      );
      expect(result.stderr).toContain("hint: run `host run --help` for the options");
    }
    expect(existsSync(journal)).toBe(false);
    const good = await cli([
      "run",
      "--bundle",
      bundle,
      "--script",
      script,
      "--message",
      "hi",
      "--session-id",
      `ses.ok:1-${"x".repeat(118)}`,
      "--workspace",
      scratch,
      "--journal",
      journal,
    ]);
    expect(good.code, good.stderr).toBe(EXIT_CODES.ok);
  });

  it("every code in CLI_ERROR_CODES has a row in the README's error table; JOURNAL_NOT_FOUND is one, with a hint at --journal", async () => {
    const readme = readFileSync(path.resolve(import.meta.dirname, "../README.md"), "utf8");
    const table = readme.slice(readme.indexOf("## Error codes"), readme.indexOf("## Commands"));
    const rows = table.split("\n").filter((line) => line.startsWith("| `"));
    for (const code of Object.values(CLI_ERROR_CODES))
      expect(
        rows.some((row) => row.split("|")[1]!.includes(`\`${code}\``)),
        code,
      ).toBe(true);
    expect(CLI_ERROR_CODES).toMatchObject({ JOURNAL_NOT_FOUND: "JOURNAL_NOT_FOUND", BUNDLE_DOES_NOT_RESOLVE: "BUNDLE_DOES_NOT_RESOLVE" });
    const missing = await cli(["journal", "sessions", "--journal", path.join(scratch, "no-such.db")]);
    expect(missing.code).toBe(EXIT_CODES.failed);
    expect(missing.stderr).toMatch(/^error JOURNAL_NOT_FOUND: .*no-such\.db: no journal here yet/m);
    expect(missing.stderr).toContain("hint: check --journal PATH (default <workspace>/.openworker/journal.db); `call`, `run` and `serve` create the journal");
  });

  it("M2 serve --mcp --http with a bundle whose tools do not resolve is BUNDLE_DOES_NOT_RESOLVE, hinting at tools check, not at the --bundle folder", async () => {
    const bundle = writeBundle(path.join(scratch, "typo"), '{"version":3,"tools":["demo.echp"]}');
    const result = await cli(["serve", "--mcp", "--bundle", bundle, "--http", "0", "--workspace", scratch, "--journal", path.join(scratch, "typo.db")]);
    expect(result.code).toBe(EXIT_CODES.failed);
    expect(result.stderr).toMatch(/^problem TOOL_NOT_REGISTERED: .*demo\.echp/m);
    expect(result.stderr).toMatch(/^error BUNDLE_DOES_NOT_RESOLVE: .*typo: 1 problem\(s\)/m);
    expect(result.stderr).toContain("hint: the problems above say what does not resolve; `host tools check --bundle DIR` lists each one");
    expect(result.stderr).not.toContain("pass --bundle with the folder");
  });
});

describe("tools check against the model provider's tool-name limit (N4)", () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "ow-cli-alias-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  // Aliases of 70 and 64 bytes: both fit the 80 of N4, only the second fits the 64 an OpenAI-compatible provider accepts.
  const long = `limits.${"l".repeat(62)}`;
  const atLimit = `limits.${"a".repeat(56)}`;
  const longAlias = long.replace(".", "__");
  const tools = () => {
    const registry = new ToolRegistry();
    for (const name of [long, atLimit, "limits.short"]) registry.register(codeTool(name, "Echo.", { type: "object" }, (args) => ({ ok: args })));
    return registry;
  };
  const model = ["--base-url", "http://127.0.0.1:9/v1", "--model", "local-model"];
  type Check = { ok: boolean; problems: { code: string; message: string }[] };

  it("N4 with --base-url and --model, an alias longer than the provider's maxToolNameLength is ALIAS_TOO_LONG_FOR_PROVIDER, naming alias, bytes and limit", async () => {
    const bundle = writeBundle(path.join(scratch, "long"), JSON.stringify({ version: 3, tools: [long, atLimit, "limits.short"] }));
    const withoutModel = await cli(["tools", "check", "--bundle", bundle, "--json"], { tools: tools() });
    expect(withoutModel.code, withoutModel.stderr).toBe(EXIT_CODES.ok);

    const checked = await cli(["tools", "check", "--bundle", bundle, "--json", ...model], { tools: tools() });
    expect(checked.code, checked.stderr).toBe(EXIT_CODES.failed);
    const { ok, problems } = JSON.parse(checked.stdout) as Check;
    expect(ok).toBe(false);
    expect(problems.map((problem) => problem.code)).toEqual(["ALIAS_TOO_LONG_FOR_PROVIDER"]);
    expect(problems[0]!.message).toContain(`"${longAlias}" (70 bytes)`);
    expect(problems[0]!.message).toContain("longer than the 64 bytes");

    // What the check reports is what a turn with the same options refuses, before any request is sent.
    const turn = await cli(
      ["run", "--bundle", bundle, "--message", "hi", "--approve", "no", "--workspace", scratch, "--journal", path.join(scratch, "long.db"), ...model],
      { tools: tools() },
    );
    expect(turn.code).toBe(EXIT_CODES.failed);
    expect(turn.stdout + turn.stderr).toContain("ALIAS_TOO_LONG_FOR_PROVIDER");
  });

  it("N4 the provider's limit is listed beside the bundle's other problems; the scripted provider has no limit", async () => {
    const bundle = writeBundle(path.join(scratch, "mixed"), JSON.stringify({ version: 3, tools: [long, "limits.nosuch"] }));
    const checked = await cli(["tools", "check", "--bundle", bundle, "--json", ...model], { tools: tools() });
    expect(checked.code).toBe(EXIT_CODES.failed);
    const { problems } = JSON.parse(checked.stdout) as Check;
    expect(problems.map((problem) => problem.code).sort()).toEqual(["ALIAS_TOO_LONG_FOR_PROVIDER", "TOOL_NOT_REGISTERED"]);
    expect(problems.find((problem) => problem.code === "ALIAS_TOO_LONG_FOR_PROVIDER")!.message).toContain(longAlias);

    const scripted = writeBundle(path.join(scratch, "scripted"), JSON.stringify({ version: 3, tools: [long] }));
    const result = await cli(["tools", "check", "--bundle", scripted, "--provider", "scripted"], { tools: tools() });
    expect(result.code, result.stderr).toBe(EXIT_CODES.ok);
  });
});

describe('providers with placement "sandbox" (A4)', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "ow-cli-sandbox-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  // A stdio provider the host wants isolated; a real `sh` wrapper stands in for the sandbox.
  const sandboxed = () => {
    const tools = new ToolRegistry();
    tools.registerProvider({ transport: "stdio", namespace: "boxed", program: path.join(FIXTURES, "where-server.sh"), args: [], placement: "sandbox" });
    return tools;
  };
  const wrap: SandboxLauncher = ({ program, args, env }) => ({ program: "/bin/sh", args: ["-c", 'SANDBOXED=yes exec "$@"', "sandbox", program, ...args], env });

  it("A4 without the host's launcher the stock bubblewrap one runs the provider; the host's launcher, given, comes first", async () => {
    const bundle = writeBundle(path.join(scratch, "boxed"), JSON.stringify({ version: 3, tools: ["boxed.where"] }));
    const stock = await cli(
      ["call", "boxed.where", "--bundle", bundle, "--approve", "yes", "--json", "--workspace", scratch, "--journal", path.join(scratch, "stock.db")],
      { tools: sandboxed() },
    );
    expect(stock.code, stock.stderr).toBe(EXIT_CODES.ok);
    expect(stock.stdout).toContain("sandboxed=no");
    const checked = await cli(["tools", "check", "--bundle", bundle], { tools: sandboxed(), sandbox: wrap });
    expect(checked.code, checked.stderr).toBe(EXIT_CODES.ok);
    const called = await cli(
      ["call", "boxed.where", "--bundle", bundle, "--approve", "yes", "--json", "--workspace", scratch, "--journal", path.join(scratch, "boxed.db")],
      { tools: sandboxed(), sandbox: wrap },
    );
    expect(called.code, called.stderr).toBe(EXIT_CODES.ok);
    expect(called.stdout).toContain("sandboxed=yes");
  });
});
