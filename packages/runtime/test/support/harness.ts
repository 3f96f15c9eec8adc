import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { afterEach, beforeEach } from "vitest";
import { codeTool, toolError, type JsonSchema, type Tool } from "@openworker/tools-sdk";
import { Runtime, type RuntimeOptions } from "../../src/index.js";

/** A scratch folder removed by `cleanup()`. */
export function scratch(prefix = "ow-runtime-"): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A fresh scratch folder for each test of the file (or `describe`) that calls it, read as
 * `space.dir`: made before each test, and removed after it once `close` (closing what the
 * test opened there: its runtime, a fake endpoint) has run, whether or not it threw.
 */
export function scratchEach(close?: () => unknown): { readonly dir: string } {
  let current: ReturnType<typeof scratch> | undefined;
  beforeEach(() => {
    current = scratch();
  });
  afterEach(async () => {
    try {
      await close?.();
    } finally {
      current?.cleanup();
      current = undefined;
    }
  });
  return {
    get dir(): string {
      if (current === undefined) throw new Error("scratchEach: space.dir is read outside a test");
      return current.dir;
    },
  };
}

/** Writes a bundle folder with a v3 selection (or any tools.json text) and returns its path. */
export function writeBundle(root: string, selection: readonly string[] | string, name = "bundle"): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "manifest.md"), "---\nname: Test coworker\n---\nYou test tools.\n");
  const tools = typeof selection === "string" ? selection : JSON.stringify({ version: 3, tools: selection });
  writeFileSync(path.join(dir, "tools.json"), tools);
  return dir;
}

/** A stand-in host entry file: its bytes are the "host executable" of the identity. */
export function writeHostEntry(root: string, content = "// host v1\n"): string {
  const file = path.join(root, "host.js");
  writeFileSync(file, content);
  return file;
}

export const echo = codeTool(
  "test.echo",
  "Echo the arguments back.",
  { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  (args) => ({ ok: args }),
);

/** A native tool from a name and a call, with an empty-object schema unless given. */
export function nativeTool(name: string, call: Tool["call"], extra: Partial<Tool> & { schema?: JsonSchema; version?: string } = {}): Tool {
  const { schema, version, ...hooks } = extra;
  const descriptor = { name, description: `test tool ${name}`, inputSchema: schema ?? { type: "object", properties: {} }, version: version ?? "1" };
  return { descriptor: () => descriptor, call, ...hooks };
}

/** Misbehaving native tools, one per failure mode of E1–E4. */
export function hostileTools(): Record<string, Tool> {
  return {
    hangs: nativeTool("test.hangs", () => new Promise(() => undefined)),
    floods: nativeTool("test.floods", async (context) => {
      for (let index = 0; index < 500; index++) context.progress.report({ message: `tick ${index}` });
      return { json: "flooded" };
    }),
    huge: nativeTool("test.huge", async () => ({ json: { blob: "x".repeat(300 * 1024) } })),
    throws: nativeTool("test.throws", async () => {
      throw new Error("kaput");
    }),
    cyclic: nativeTool("test.cyclic", async () => {
      const value: Record<string, unknown> = {};
      value.self = value;
      return { json: value };
    }),
    bigint: nativeTool("test.bigint", async () => ({ json: { n: 10n } })),
    refuses: nativeTool("test.refuses", async () => toolError("NOT_TODAY", "try tomorrow")),
  };
}

/** Opens a runtime on a fresh registry holding `tools`, with its journal in `dir`. */
export async function openRuntime(dir: string, tools: readonly Tool[], options: Partial<RuntimeOptions> = {}): Promise<Runtime> {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  return Runtime.openWithRegistry(registry, {
    workspace: dir,
    journal: { path: path.join(dir, "journal.db") },
    hostEntry: writeHostEntry(dir),
    ...options,
  });
}
