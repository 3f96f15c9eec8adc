import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type CodeBlock, codeBlocks, DOCS, docFiles, GUIDES, shellCommands } from "../tests/consumer/guides.js";
import { ROOT } from "../tests/consumer/workspace.js";

// Guides: every code block of docs/ is either a snippet file (compiled and run by
// test/consumer.test.ts in a project outside the workspace) or a command. Commands of the
// stock CLI must name real commands and options; `shell: run` ones are also run there.
const blocks = docFiles().flatMap((file) => codeBlocks(file));
// The stock CLI as the example host builds it: the same commands and options as any host's.
const stockHost = path.join(ROOT, "apps", "example-host", "dist", "host.js");
const ILLUSTRATIVE_PROGRAMS = new Set(["mkdir", "cd", "npm", "npx", "pnpm", "node"]);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

/** Splits a command line into words, honouring quotes; stops at a redirection. */
function words(command: string): string[] {
  const out: string[] = [];
  for (const match of command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) {
    const word = match[1] ?? match[2] ?? match[3]!;
    if (match[3] && /^[<>|]/.test(word)) break;
    out.push(word);
  }
  return out;
}

const helpCache = new Map<string, string>();
function help(command: readonly string[]): string {
  const key = command.join(" ");
  if (!helpCache.has(key)) {
    helpCache.set(key, execFileSync(process.execPath, [stockHost, ...command, "--help"], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } }));
  }
  return helpCache.get(key)!;
}

/** Problems of one `node dist/host.js …` line against the stock CLI's own help. */
function cliProblems(command: string): string[] {
  const argv = words(command).slice(2);
  const name = argv[0] === "tools" || argv[0] === "journal" ? argv.slice(0, 2) : argv.slice(0, 1);
  const commands = help([]);
  if (!new RegExp(`^ {2}${name.join(" ")} {2}`, "m").test(commands)) return [`unknown command "${name.join(" ")}"`];
  const options = help(name);
  return argv
    .filter((word) => word.startsWith("--"))
    .map((word) => word.split("=")[0]!)
    .filter((flag) => !new RegExp(`(^|\\s)${flag}(\\s|$|=|\\[)`, "m").test(options))
    .map((flag) => `"${name.join(" ")}" has no option ${flag}`);
}

function where(block: CodeBlock): string {
  return `${block.guide}:${block.line}`;
}

describe("guides", () => {
  it("the three guides and their index exist, and the root README links them", () => {
    for (const guide of GUIDES) expect(existsSync(path.join(DOCS, guide)), guide).toBe(true);
    const index = readFileSync(path.join(DOCS, "README.md"), "utf8");
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    for (const guide of GUIDES) {
      expect(index, `docs/README.md links ${guide}`).toContain(`](${guide})`);
      expect(readme, `README.md links docs/${guide}`).toContain(`](docs/${guide})`);
    }
  });

  it("every code block carries a marker saying how a test proves it", () => {
    expect(blocks.length).toBeGreaterThan(20);
    expect(blocks.filter((block) => block.marker.kind === "none").map(where)).toEqual([]);
  });

  it("every snippet block is exactly its file under docs/snippets", () => {
    const problems: string[] = [];
    for (const block of blocks) {
      if (block.marker.kind !== "snippet") continue;
      const file = path.join(ROOT, block.marker.path);
      if (!block.marker.path.startsWith("docs/snippets/") || !existsSync(file)) problems.push(`${where(block)}: no snippet file ${block.marker.path}`);
      else if (readFileSync(file, "utf8") !== block.content) problems.push(`${where(block)}: block differs from ${block.marker.path}`);
    }
    expect(problems).toEqual([]);
  });

  it("every snippet file is shown in a guide (none is compiled without being read)", () => {
    const shown = new Set(blocks.flatMap((block) => (block.marker.kind === "snippet" ? [block.marker.path] : [])));
    const files = filesUnder(path.join(DOCS, "snippets")).map((file) => path.relative(ROOT, file));
    expect(files.filter((file) => !shown.has(file))).toEqual([]);
  });

  it("runnable shell blocks only run the built host or compiled snippets", () => {
    const problems: string[] = [];
    for (const block of blocks) {
      if (block.marker.kind !== "shell" || block.marker.mode !== "run") continue;
      for (const command of shellCommands(block)) {
        if (!/^node dist\/[\w-]+\.js( |$)/.test(command)) problems.push(`${where(block)}: \`${command}\` is not \`node dist/<file>.js …\``);
      }
    }
    expect(problems).toEqual([]);
  });

  it("every CLI command line in the guides names a real command and real options (checked against --help)", () => {
    const problems: string[] = [];
    let checked = 0;
    for (const block of blocks) {
      if (block.marker.kind !== "shell") continue;
      for (const command of shellCommands(block)) {
        const program = words(command)[0]!;
        if (block.marker.mode === "illustrative" && !ILLUSTRATIVE_PROGRAMS.has(program)) problems.push(`${where(block)}: unexpected program ${program}`);
        if (!command.startsWith("node dist/host.js")) continue;
        checked++;
        problems.push(...cliProblems(command).map((problem) => `${where(block)}: \`${command}\`: ${problem}`));
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(10);
  });

  it("every package a snippet project imports is declared in its package.json (pnpm's strict layout hides the rest)", () => {
    // The operate scripts are laid out in the host's src/ (see docs/operate.md).
    const projects = [
      { manifest: "docs/snippets/partner/package.json", folders: ["docs/snippets/partner"] },
      { manifest: "docs/snippets/host/package.json", folders: ["docs/snippets/host", "docs/snippets/operate"] },
    ];
    const problems: string[] = [];
    for (const project of projects) {
      const manifest = JSON.parse(readFileSync(path.join(ROOT, project.manifest), "utf8")) as Record<string, Record<string, string> | undefined>;
      const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})]);
      const files = project.folders.flatMap((folder) => filesUnder(path.join(ROOT, folder))).filter((file) => /\.(?:ts|mjs)$/.test(file));
      for (const file of files) {
        for (const match of readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gm)) {
          const specifier = match[1]!;
          if (specifier.startsWith(".") || specifier.startsWith("node:")) continue;
          const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!;
          if (!declared.has(name)) problems.push(`${path.relative(ROOT, file)} imports ${name}, which ${project.manifest} does not declare`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("every error code a package declares is named in its README (codes are API: hosts match on them)", async () => {
    const constants: [pkg: string, entry: string, name: string][] = [
      ["runtime", "dist/index.js", "RUNTIME_ERROR_CODES"],
      ["runtime", "dist/index.js", "MODEL_PROVIDER_CODES"],
      ["model-openai", "dist/index.js", "OPENAI_PROVIDER_CODES"],
      ["mcp-bridge", "dist/index.js", "MCP_ERROR_CODES"],
      ["registry", "dist/index.js", "REGISTRY_ERROR_CODES"],
      ["bundle-resolver", "dist/index.js", "BUNDLE_ERROR_CODES"],
      ["journal", "dist/index.js", "JOURNAL_ERRORS"],
      ["cli", "dist/index.js", "CLI_ERROR_CODES"],
      ["harness-client", "dist/index.js", "HARNESS_ERROR_CODES"],
      ["tools-sdk", "dist/index.js", "SDK_ERROR_CODES"],
    ];
    const missing: string[] = [];
    for (const [pkg, entry, name] of constants) {
      const module = (await import(path.join(ROOT, "packages", pkg, entry))) as Record<string, Record<string, string>>;
      const readme = readFileSync(path.join(ROOT, "packages", pkg, "README.md"), "utf8");
      const codes = module[name];
      expect(codes, `${pkg} exports ${name}`).toBeDefined();
      for (const code of Object.values(codes!)) if (!readme.includes(code)) missing.push(`${pkg}: ${name}.${code}`);
    }
    expect(missing).toEqual([]);
  });

  it("the command check itself refuses an unknown command and an unknown option", () => {
    expect(cliProblems("node dist/host.js tools lsit")).toEqual(['unknown command "tools lsit"']);
    expect(cliProblems("node dist/host.js call x --aprove yes")).toEqual(['"call" has no option --aprove']);
    expect(cliProblems("node dist/host.js journal show ses_1 --json")).toEqual([]);
  });
});
