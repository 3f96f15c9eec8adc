import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadBundle } from "../src/index.js";
import { rejected } from "./helpers.js";

const root = mkdtempSync(path.join(os.tmpdir(), "ow-bundle-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const MANIFEST = "---\nname: Helper\n---\nHelp the user.\n";
const TOOLS = '{"version":3,"tools":["example.web_search"]}';

/** Writes a bundle folder; `undefined` leaves a file out, a Buffer is written as is. */
function bundle(name: string, files: { manifest?: string | Buffer; tools?: string | Buffer | "DIR" }, nested = true): string {
  const dir = path.join(root, name);
  const folder = nested ? path.join(dir, "coworker") : dir;
  mkdirSync(folder, { recursive: true });
  if (files.manifest !== undefined) writeFileSync(path.join(folder, "manifest.md"), files.manifest);
  if (files.tools === "DIR") mkdirSync(path.join(folder, "tools.json"));
  else if (files.tools !== undefined) writeFileSync(path.join(folder, "tools.json"), files.tools);
  return dir;
}

describe("loadBundle", () => {
  it("B1 loads coworker/manifest.md and tools.json from the parent folder, keeping the exact bytes", async () => {
    const dir = bundle("parent", { manifest: MANIFEST, tools: Buffer.from(`\uFEFF${TOOLS}`) });
    const loaded = await loadBundle(dir);
    expect(loaded.dir).toBe(path.join(dir, "coworker"));
    expect(loaded.manifest.name).toBe("Helper");
    expect(loaded.selection).toEqual({ version: 3, tools: ["example.web_search"] });
    expect(Buffer.from(loaded.toolsJsonBytes).equals(Buffer.from(`\uFEFF${TOOLS}`))).toBe(true);
    expect(Buffer.from(loaded.manifestBytes).toString("utf8")).toBe(MANIFEST);
  });

  it("B1 also accepts the bundle folder itself", async () => {
    const dir = bundle("direct", { manifest: MANIFEST, tools: TOOLS }, false);
    expect((await loadBundle(dir)).dir).toBe(dir);
  });

  it.each([
    ["no-manifest", { tools: TOOLS }, "MANIFEST_MISSING", "manifest.md"],
    ["no-tools", { manifest: MANIFEST }, "TOOLS_JSON_MISSING", "tools.json"],
    ["tools-dir", { manifest: MANIFEST, tools: "DIR" as const }, "BUNDLE_FILE_IS_DIRECTORY", "tools.json"],
    ["huge-tools", { manifest: MANIFEST, tools: `${TOOLS}${" ".repeat(1024 * 1024)}` }, "BUNDLE_FILE_TOO_LARGE", "tools.json"],
    ["huge-manifest", { manifest: `${MANIFEST}${"x".repeat(1024 * 1024)}`, tools: TOOLS }, "BUNDLE_FILE_TOO_LARGE", "manifest.md"],
    ["latin1", { manifest: Buffer.from("---\nname: Caf\xe9\n---\nHi\n", "latin1"), tools: TOOLS }, "BUNDLE_FILE_NOT_UTF8", "manifest.md"],
    ["bad-json", { manifest: MANIFEST, tools: "{version:3}" }, "TOOLS_JSON_INVALID_JSON", "tools.json"],
    ["bad-version", { manifest: MANIFEST, tools: '{"version":9}' }, "TOOLS_JSON_VERSION_UNKNOWN", "tools.json"],
    ["bad-manifest", { manifest: "Just text", tools: TOOLS }, "MANIFEST_INVALID", "manifest.md"],
  ])("B6 a bundle with %s fails with %s naming the file", async (name, files, code, file) => {
    const error = await rejected(loadBundle(bundle(name, files)));
    expect(error.code).toBe(code);
    expect(error.message).toContain(path.join(root, name, "coworker", file));
  });

  it("B6 a folder with no bundle, a missing folder and a file fail with BUNDLE_NOT_FOUND", async () => {
    mkdirSync(path.join(root, "empty"), { recursive: true });
    writeFileSync(path.join(root, "plain-file"), "x");
    for (const dir of ["empty", "does-not-exist", "plain-file"]) {
      const error = await rejected(loadBundle(path.join(root, dir)));
      expect(error.code).toBe("BUNDLE_NOT_FOUND");
      expect(error.message).toContain(path.join(root, dir));
    }
  });
});
