import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { Runtime, type RuntimeOptions } from "@openworker/runtime";
import { codeTool, type JsonSchema, type Tool } from "@openworker/tools-sdk";
import { afterEach, beforeEach } from "vitest";

/**
 * A fresh scratch folder for each test of the file that calls it, read as `space.dir`,
 * removed after the test once `close` (closing its runtime and fake endpoint) has run.
 */
export function scratchEach(close?: () => unknown): { readonly dir: string } {
  let current: string | undefined;
  beforeEach(() => {
    current = mkdtempSync(path.join(tmpdir(), "ow-model-openai-"));
  });
  afterEach(async () => {
    try {
      await close?.();
    } finally {
      if (current !== undefined) rmSync(current, { recursive: true, force: true });
      current = undefined;
    }
  });
  return {
    get dir(): string {
      if (current === undefined) throw new Error("scratchEach: space.dir is read outside a test");
      return current;
    },
  };
}

/** Writes a bundle folder with a v3 selection and returns its path. */
export function writeBundle(root: string, selection: readonly string[]): string {
  const dir = path.join(root, "bundle");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "manifest.md"), "---\nname: Test coworker\n---\nYou test tools.\n");
  writeFileSync(path.join(dir, "tools.json"), JSON.stringify({ version: 3, tools: selection }));
  return dir;
}

export const echo = codeTool(
  "test.echo",
  "Echo the arguments back.",
  { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  (args) => ({ ok: args }),
);

/** A native tool from a name and a call, with an empty-object schema unless given. */
export function nativeTool(name: string, call: Tool["call"], extra: Partial<Tool> & { schema?: JsonSchema } = {}): Tool {
  const { schema, ...hooks } = extra;
  const descriptor = { name, description: `test tool ${name}`, inputSchema: schema ?? { type: "object", properties: {} }, version: "1" };
  return { descriptor: () => descriptor, call, ...hooks };
}

/** Opens a runtime on a fresh registry holding `tools`, with its journal in `dir`. */
export async function openRuntime(dir: string, tools: readonly Tool[], options: Partial<RuntimeOptions> = {}): Promise<Runtime> {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  const hostEntry = path.join(dir, "host.js");
  writeFileSync(hostEntry, "// host v1\n");
  return Runtime.openWithRegistry(registry, { workspace: dir, journal: { path: path.join(dir, "journal.db") }, hostEntry, ...options });
}
