import type { Bundle } from "@openworker/bundle-resolver";
import { modelAlias, OpenWorkerError } from "@openworker/tools-sdk";
import type { ApprovalPolicy } from "@openworker/runtime";
import { CLI_ERROR_CODES } from "../cli/errors.js";
import type { Terminal } from "../cli/terminal.js";
import { namedTools } from "./selection.js";

/** Loads `--bundle DIR` (B1, B6). */
export async function loadBundleDir(dir: string): Promise<Bundle> {
  const { loadBundle } = await import("@openworker/bundle-resolver");
  return loadBundle(dir);
}

/**
 * The bundle of `call` without `--bundle`: a coworker selecting exactly the one tool
 * called, built in memory. It goes through the same resolution and identity as a bundle
 * on disk; its identity pins this generated manifest and selection.
 */
export async function singleToolBundle(qualifiedName: string, workspace: string): Promise<Bundle> {
  const { parseManifest, parseToolsJson } = await import("@openworker/bundle-resolver");
  const manifestText = `---\nname: openworker call\ndescription: One direct call from the command line.\n---\nCall ${qualifiedName} as asked.\n`;
  const toolsText = JSON.stringify({ version: 3, tools: [qualifiedName] });
  const encoder = new TextEncoder();
  return Object.freeze({
    dir: workspace,
    manifest: parseManifest(manifestText, "(call) manifest.md"),
    selection: parseToolsJson(toolsText, "(call) tools.json"),
    manifestBytes: encoder.encode(manifestText),
    toolsJsonBytes: encoder.encode(toolsText),
  });
}

/** Whether the bundle selects this qualified name (a v1 bundle selects whole MCP servers). */
export function selects(bundle: Bundle, qualifiedName: string): boolean {
  const { selection } = bundle;
  const namespace = qualifiedName.slice(0, qualifiedName.indexOf("."));
  return selection.version === 3
    ? selection.tools.includes(qualifiedName)
    : selection.version === 2
      ? (selection.mcpServers[namespace] ?? []).includes(qualifiedName.slice(namespace.length + 1))
      : selection.mcpServers.includes(namespace);
}

/**
 * Notes on stderr each tool the policy classifies that the bundle does not select: often
 * a misspelt name, whose tool then falls back to `external` without a word.
 */
export function noteUnselectedClassifications(terminal: Terminal, bundle: Bundle, policy: ApprovalPolicy, file: string): void {
  for (const name of Object.keys(policy.classifications ?? {})) {
    if (!selects(bundle, name))
      terminal.note(terminal.paint("yellow", `note: ${file} classifies ${name}, which this bundle does not select (a misspelt name?)`));
  }
}

/**
 * Fails unless the bundle selects this qualified name (B2: the list is the selection). A
 * model alias given for a qualified name (`shipping__track`) is named as such, with the
 * selected name it stands for: nothing is looked up beyond the names the bundle lists (N7).
 */
export function assertSelected(bundle: Bundle, qualifiedName: string): void {
  if (selects(bundle, qualifiedName)) return;
  const meant = namedTools(bundle.selection).find((name) => modelAlias(name) === qualifiedName);
  const why =
    meant === undefined
      ? "only the tools it selects can be called: add it to tools.json, or call without --bundle"
      : `did you mean ${JSON.stringify(meant)}? (${qualifiedName} is its model alias; call takes the qualified name)`;
  throw new OpenWorkerError(CLI_ERROR_CODES.TOOL_NOT_SELECTED, `${bundle.dir}: the bundle does not select ${JSON.stringify(qualifiedName)}; ${why}`);
}
