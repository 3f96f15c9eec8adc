import { redactArgs } from "@openworker/mcp-bridge/redact";
import { urlForDisplay, type McpProviderDefinition, type RegisteredTool } from "@openworker/registry";
import { tokenStorePath } from "../setup/authorization.js";
import type { BundleSelection } from "@openworker/bundle-resolver";
import { stringOption, type CommandContext, type CommandSpec } from "../cli/command.js";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { CLI_ERROR_CODES, EXIT_CODES, usageError } from "../cli/errors.js";
import { table } from "../cli/terminal.js";
import type { ModelProvider } from "@openworker/runtime";
import { loadBundleDir } from "../setup/bundle.js";
import { commandLineModel } from "../setup/runtime.js";
import { keptIndexes } from "../setup/entry-indexes.js";
import { inspectSelection, type NotOfferedTool, type SelectionProblem, type SelectionReport } from "../setup/selection.js";

/** `tools list`: registered natives and providers, or a bundle's resolved selection. */
export const toolsList: CommandSpec = {
  words: ["tools", "list"],
  summary: "List registered native tools and MCP providers, or a bundle's resolved selection",
  usage: "[--bundle DIR [--discover]] [--json]",
  positionals: { min: 0, max: 0 },
  listing: true,
  options: {
    bundle: { type: "string", value: "DIR", description: "show this bundle's selection: qualified name, alias, kind, version, schema fingerprint" },
    discover: { type: "boolean", description: "start the bundle's MCP providers to resolve their tools too (otherwise no process starts)" },
  },
  details:
    "Without --bundle: every registered native tool and MCP provider (available, not visible: only a bundle's\n" +
    "selection is shown to a model). With --bundle: the selection resolved against the registry; MCP tools show\n" +
    "as not discovered unless --discover starts their providers (then closes them, verified).",
  async run(context) {
    const bundleDir = stringOption(context, "bundle");
    if (bundleDir === undefined && context.options.discover === true)
      throw usageError("tools list: --discover applies to a bundle's selection; pass --bundle DIR");
    if (bundleDir === undefined) return listRegistered(context);
    const bundle = await loadBundleDir(bundleDir);
    const report = await inspectSelection(context.registry, bundle, {
      discover: context.options.discover === true,
      signal: context.signal,
      sandbox: context.sandbox,
      terminal: context.terminal,
      tokenStore: tokenStorePath(context),
      program: context.program,
    });
    if (context.terminal.json) {
      context.terminal.printJson({
        bundle: bundle.dir,
        version: bundle.selection.version,
        tools: report.rows,
        notOffered: report.notOffered,
        problems: report.problems,
      });
      return report.problems.length > 0 ? EXIT_CODES.failed : EXIT_CODES.ok;
    }
    printRows(context, report);
    printNotOffered(context, report.notOffered);
    printProblems(context, report.problems);
    return report.problems.length > 0 ? EXIT_CODES.failed : EXIT_CODES.ok;
  },
};

/** `tools check`: every problem of a bundle, non-zero exit when there is one (for a partner's CI). */
export const toolsCheck: CommandSpec = {
  words: ["tools", "check"],
  summary: "Check a bundle against the registry: every problem listed, exit 1 when there is one",
  usage: "--bundle DIR [--json]",
  positionals: { min: 0, max: 0 },
  listing: true,
  options: {
    bundle: { type: "string", value: "DIR", description: "the bundle folder (manifest.md and tools.json, or a parent with coworker/)" },
  },
  details:
    "Loads the bundle, starts the MCP providers it needs and discovers their catalogs, resolves every\n" +
    "selected name and lists every problem, not only the first. Providers are closed again and their\n" +
    "cleanup verified. Use it in CI: exit 0 means a session would resolve the bundle. Tools a provider publishes\n" +
    "that no session offers (those requiring MCP tasks) are listed as not offered, with why; selecting one is a problem.\n" +
    "With a model configured as for run (--base-url URL --model NAME, or --provider), every selected alias\n" +
    "longer than that provider accepts is a problem too (ALIAS_TOO_LONG_FOR_PROVIDER; 64 bytes for openai, anthropic and openai-responses).",
  async run(context) {
    const bundleDir = stringOption(context, "bundle");
    if (bundleDir === undefined) throw usageError("tools check needs --bundle DIR");
    // Built before the bundle is read: a wrong model option is a usage error, not a problem of the bundle.
    const model = (await commandLineModel(context, undefined))?.model;
    let report: SelectionReport;
    let dir = bundleDir;
    try {
      const bundle = await loadBundleDir(bundleDir);
      dir = bundle.dir;
      report = await inspectSelection(context.registry, bundle, {
        discover: true,
        signal: context.signal,
        sandbox: context.sandbox,
        model,
        terminal: context.terminal,
        tokenStore: tokenStorePath(context),
        program: context.program,
      });
    } catch (error) {
      // A bundle that does not load is problems to list, not a crash; a stop is not a problem of the bundle.
      if (!OpenWorkerError.isInstance(error) || error.code === CLI_ERROR_CODES.INTERRUPTED) throw error;
      report = { rows: [], tools: [], ...(await loadProblems(context, error, model)) };
    }
    const ok = report.problems.length === 0;
    if (context.terminal.json) {
      context.terminal.printJson({ ok, bundle: dir, tools: report.rows, notOffered: report.notOffered, problems: report.problems });
      return ok ? EXIT_CODES.ok : EXIT_CODES.failed;
    }
    if (ok) {
      printRows(context, report);
      printNotOffered(context, report.notOffered);
      context.terminal.line(context.terminal.paint("green", `ok: ${report.rows.length} selected tool(s) resolve`));
      return EXIT_CODES.ok;
    }
    printNotOffered(context, report.notOffered);
    printProblems(context, report.problems);
    return EXIT_CODES.failed;
  },
};

/** Credentials in a stdio provider's `args` are shown masked (`redactArgs`, E6), in text and JSON alike. */
function listRegistered(context: CommandContext): number {
  const natives = context.registry.natives();
  const providers = context.registry.providers();
  if (context.terminal.json) {
    context.terminal.printJson({ natives: natives.map(nativeJson), providers: providers.map(providerJson) });
    return EXIT_CODES.ok;
  }
  const { terminal } = context;
  terminal.line(terminal.paint("bold", `native tools (${natives.length})`));
  for (const line of table([
    ["name", "alias", "version", "classification"],
    ...natives.map((tool) => [tool.name, tool.alias, tool.descriptor.version, tool.classification ?? "external"]),
  ])) {
    terminal.line(`  ${line}`);
  }
  terminal.line(terminal.paint("bold", `MCP providers (${providers.length})`));
  for (const line of table([
    ["namespace", "transport", "placement", "launch"],
    ...providers.map((provider) => [provider.namespace, provider.transport, placementOf(provider), launchOf(provider)]),
  ])) {
    terminal.line(`  ${line}`);
  }
  return EXIT_CODES.ok;
}

function printRows(context: CommandContext, report: SelectionReport): void {
  if (report.rows.length === 0) return;
  const rows = report.rows.map((row) => [
    row.qualifiedName,
    row.alias,
    row.kind,
    row.version === null ? "(not discovered)" : shortDigest(row.version),
    row.schemaFingerprint ? shortDigest(row.schemaFingerprint) : "-",
  ]);
  for (const line of table([["qualified name", "alias", "kind", "version", "schema"], ...rows])) context.terminal.line(line);
}

/** Tools the discovered providers publish that no session offers: not a problem unless the bundle names one. */
function printNotOffered(context: CommandContext, tools: readonly NotOfferedTool[]): void {
  const { terminal } = context;
  for (const tool of tools) terminal.line(`${terminal.paint("yellow", "not offered:")} ${tool.qualifiedName}: ${tool.reason}`);
}

function printProblems(context: CommandContext, problems: readonly SelectionProblem[]): void {
  const { terminal } = context;
  for (const problem of problems) terminal.line(`${terminal.paint("red", `problem ${problem.code}:`)} ${problem.message}`);
  if (problems.length > 0) terminal.line(terminal.paint("red", `${problems.length} problem(s)`));
}

function nativeJson(tool: RegisteredTool) {
  return {
    name: tool.name,
    alias: tool.alias,
    version: tool.descriptor.version,
    description: tool.descriptor.description,
    classification: tool.classification ?? "external",
    placement: tool.placement,
  };
}

function providerJson(provider: McpProviderDefinition) {
  return provider.transport === "stdio"
    ? {
        namespace: provider.namespace,
        transport: provider.transport,
        program: provider.program,
        args: redactArgs(provider.args),
        placement: provider.placement ?? "host",
        ...(provider.placement === "sandbox" ? { sandbox: provider.sandbox ?? {} } : {}),
      }
    : { namespace: provider.namespace, transport: provider.transport, url: urlForDisplay(provider.url), placement: provider.placement ?? "host" };
}

/** A4: where the provider runs, and for a sandbox its policy: `sandbox (read 2, write 1, network none)`. */
function placementOf(provider: McpProviderDefinition): string {
  if (provider.placement !== "sandbox" || provider.transport !== "stdio") return provider.placement ?? "host";
  const policy = provider.sandbox ?? {};
  const network = policy.network === undefined || policy.network === "none" ? "none" : `allow ${policy.network.allow.join(", ")}`;
  return `sandbox (read ${policy.read?.length ?? 0}, write ${policy.write?.length ?? 0}, network ${network})`;
}

function launchOf(provider: McpProviderDefinition): string {
  return provider.transport === "stdio" ? [provider.program, ...redactArgs(provider.args)].join(" ") : urlForDisplay(provider.url);
}

function shortDigest(digest: string): string {
  return digest.startsWith("sha256:") && digest.length > 19 ? `${digest.slice(0, 19)}…` : digest;
}

/**
 * Every problem of a bundle that did not load: each bad entry of tools.json (the bundle
 * resolver collects them in `details.problems`), and what resolving its good entries finds.
 */
async function loadProblems(
  context: CommandContext,
  error: OpenWorkerError,
  model: ModelProvider | undefined,
): Promise<{ problems: SelectionProblem[]; notOffered: readonly NotOfferedTool[] }> {
  const { problemsOf } = await import("@openworker/bundle-resolver");
  const entries = problemsOf(error);
  const problems = entries.map((problem) => ({ code: problem.code, message: problem.message }));
  const rest = error.details.selection as BundleSelection | undefined;
  if (rest === undefined) return { problems, notOffered: [] };
  // The rest lacks the bad entries: its problems are named by where its entries stand in the file.
  const fileIndexes = keptIndexes(
    rest,
    entries.flatMap((problem) => (typeof problem.details.field === "string" ? [problem.details.field] : [])),
  );
  const resolved = await inspectSelection(
    context.registry,
    { selection: rest },
    {
      discover: true,
      signal: context.signal,
      sandbox: context.sandbox,
      model,
      fileIndexes,
      terminal: context.terminal,
      tokenStore: tokenStorePath(context),
      program: context.program,
    },
  );
  return { problems: [...problems, ...resolved.problems], notOffered: resolved.notOffered };
}
