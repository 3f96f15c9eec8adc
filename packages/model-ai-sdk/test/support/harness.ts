import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { Runtime, type RuntimeOptions } from "@openworker/runtime";
import { codeTool, toolError, type Tool } from "@openworker/tools-sdk";
import { afterEach, beforeEach } from "vitest";

/** The bytes of the image the camera tool returns: a PNG signature, then a recognisable tail. */
export const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xca, 0xfe]);
export const PNG_BASE64 = Buffer.from(PNG).toString("base64");
/** What the status tool's `modelContext` hook says (L1): it must reach the system prompt and never the journal. */
export const FACT = "battery-at-41-percent";

/**
 * The tools of a full turn: `test.echo` answers, `test.camera` returns an image whose
 * consent is rechecked before delivery (T4), `test.refuses` fails with a `ToolError`, and
 * `test.status` contributes a live fact (L1).
 */
export function turnTools(log: string[] = []): Tool[] {
  const echo = codeTool(
    "test.echo",
    "Echo the arguments back.",
    { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
    (args) => ({ ok: { echoed: (args as { text: string }).text } }),
  );
  const camera: Tool = {
    descriptor: () => ({ name: "test.camera", description: "Capture the window.", inputSchema: { type: "object" }, version: "1" }),
    call: async () => ({
      json: { captured: 1 },
      images: [{ mimeType: "image/png", data: PNG, description: "the settings window", recheckConsent: () => (log.push("consent rechecked"), true) }],
    }),
  };
  const refuses: Tool = {
    descriptor: () => ({ name: "test.refuses", description: "Always refuses.", inputSchema: { type: "object", properties: {} }, version: "1" }),
    call: async () => toolError("NOT_TODAY", "the device is locked; try after unlocking it"),
  };
  const status: Tool = {
    descriptor: () => ({ name: "test.status", description: "Device status.", inputSchema: { type: "object", properties: {} }, version: "1" }),
    call: async () => ({ json: null }),
    modelContext: () => ({ battery: FACT }),
  };
  return [echo, camera, refuses, status];
}

export const TURN_SELECTION = ["test.echo", "test.camera", "test.refuses", "test.status"];

/** A fresh scratch folder per test, read as `space.dir`, removed after `close` has run. */
export function scratchEach(close?: () => unknown): { readonly dir: string } {
  let current: string | undefined;
  beforeEach(() => {
    current = mkdtempSync(path.join(tmpdir(), "ow-model-ai-sdk-"));
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

/** Writes a bundle folder selecting `selection` (v3) and returns its path. */
export function writeBundle(root: string, selection: readonly string[]): string {
  const dir = path.join(root, "bundle");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "manifest.md"), "---\nname: Test coworker\n---\nYou test tools.\n");
  writeFileSync(path.join(dir, "tools.json"), JSON.stringify({ version: 3, tools: selection }));
  return dir;
}

/** Opens a runtime on a fresh registry holding `tools`, every call approved, its journal in `dir`. */
export async function openRuntime(dir: string, tools: readonly Tool[], options: Partial<RuntimeOptions>): Promise<Runtime> {
  const registry = new ToolRegistry();
  for (const tool of tools) registry.register(tool);
  const hostEntry = path.join(dir, "host.js");
  writeFileSync(hostEntry, "// host v1\n");
  return Runtime.openWithRegistry(registry, {
    workspace: dir,
    journal: { path: path.join(dir, "journal.db") },
    hostEntry,
    approver: () => ({ approved: true, who: "tester" }),
    ...options,
  });
}
