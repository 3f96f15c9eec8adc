import { PassThrough } from "node:stream";
import { ToolRegistry } from "@openworker/registry";
import { codeTool } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import { EXIT_CODES, runCli } from "../src/index.js";

const COMMAND_WORDS = [["tools", "list"], ["tools", "check"], ["call"], ["run"], ["serve"], ["journal", "sessions"], ["journal", "show"], ["journal", "verify"], ["journal", "export"]];

function registry(): ToolRegistry {
  const tools = new ToolRegistry();
  tools.register(codeTool("demo.echo", "Echo.", { type: "object" }, (args) => ({ ok: args })));
  return tools;
}

async function cli(argv: string[], options: { tty?: boolean; env?: NodeJS.ProcessEnv } = {}) {
  const stdout = Object.assign(new PassThrough(), { isTTY: options.tty ?? false });
  const stderr = Object.assign(new PassThrough(), { isTTY: options.tty ?? false });
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await runCli(registry(), { argv, programName: "host", env: options.env ?? {}, stdout, stderr, stdin: new PassThrough() });
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
