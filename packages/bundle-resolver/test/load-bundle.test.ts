import { execFileSync } from "node:child_process";
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { loadBundle, problemsOf } from "../src/index.js";
import { rejected } from "./helpers.js";

const root = mkdtempSync(path.join(os.tmpdir(), "ow-bundle-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const fifos: string[] = [];
// Without the fix a read of a FIFO waits for a writer in a libuv thread: be that writer once.
afterEach(() => {
  for (const fifo of fifos.splice(0)) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody is reading it.
    }
  }
});

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

  it.each(["manifest.md", "tools.json"])("B6 a %s that is a FIFO fails BUNDLE_FILE_NOT_A_FILE naming the file, instead of waiting for ever", async (name) => {
    const dir = bundle(`fifo-${name}`, name === "tools.json" ? { manifest: MANIFEST } : { tools: TOOLS });
    const file = path.join(dir, "coworker", name);
    execFileSync("mkfifo", [file]);
    fifos.push(file);
    const outcome = await Promise.race([rejected(loadBundle(dir)), new Promise<"hang">((resolve) => setTimeout(() => resolve("hang"), 2_000).unref())]);
    expect(outcome).not.toBe("hang");
    const error = outcome as Exclude<typeof outcome, "hang">;
    expect(error.code).toBe("BUNDLE_FILE_NOT_A_FILE");
    expect(error.message).toContain(`${file}: is a FIFO (named pipe), not a regular file`);
    expect(error.details).toMatchObject({ file, kind: "fifo" });
  });

  it.each(["/dev/null", "/dev/zero"])("B6 a tools.json linking to %s fails BUNDLE_FILE_NOT_A_FILE", async (device) => {
    if (!existsSync(device)) return;
    const dir = bundle(`device-${path.basename(device)}`, { manifest: MANIFEST });
    const file = path.join(dir, "coworker", "tools.json");
    symlinkSync(device, file);
    const error = await rejected(loadBundle(dir));
    expect(error.code).toBe("BUNDLE_FILE_NOT_A_FILE");
    expect(error.message).toContain(`${file}: is a character device`);
  });

  it("B3 loads a v2 bundle whose server is named __proto__ with that server in its selection", async () => {
    const dir = bundle("proto", { manifest: MANIFEST, tools: '{"version":2,"mcpServers":{"__proto__":["status_get"]}}' });
    const { selection } = await loadBundle(dir);
    expect(selection.version === 2 && Object.keys(selection.mcpServers)).toEqual(["__proto__"]);
  });

  it("B6 a tools.json with several bad entries, loaded from disk, carries them all", async () => {
    const dir = bundle("many", { manifest: MANIFEST, tools: '{"version":3,"tools":["a","b","ok.c"]}' });
    const error = await rejected(loadBundle(dir));
    expect(error.code).toBe("NAME_NOT_QUALIFIED");
    expect((error.details.problems as unknown[]).length).toBe(2);
    expect(error.details.selection).toEqual({ version: 3, tools: ["ok.c"] });
  });

  it("B6 a bad manifest does not hide tools.json's problems: both files' problems come together", async () => {
    const both = await rejected(loadBundle(bundle("both-bad", { manifest: "no front matter here\n", tools: '{"version":3,"tools":["a","b","ok.c"]}' })));
    expect(both.code).toMatch(/^MANIFEST_/);
    expect(both.message).toContain("(and 2 more problems in tools.json)");
    expect((both.details.problems as { code: string }[]).map((problem) => problem.code)).toEqual([both.code, "NAME_NOT_QUALIFIED", "NAME_NOT_QUALIFIED"]);
    expect(both.details.selection).toEqual({ version: 3, tools: ["ok.c"] });
    // A good tools.json beside a bad manifest is still handed on, for resolution.
    const manifestOnly = await rejected(loadBundle(bundle("manifest-bad", { manifest: "no front matter here\n", tools: TOOLS })));
    expect(manifestOnly.details.problems).toHaveLength(1);
    expect(manifestOnly.details.selection).toMatchObject({ version: expect.any(Number) });
  });

  it("B6 problemsOf lists every problem typed, whether the error carries details.problems or not", async () => {
    const both = await rejected(loadBundle(bundle("both-bad-typed", { manifest: "no front matter here\n", tools: '{"version":3,"tools":["a","ok.c"]}' })));
    expect(problemsOf(both).map((problem) => problem.code)).toEqual([both.code, "NAME_NOT_QUALIFIED"]);
    const missing = await rejected(loadBundle(path.join(root, "no-such-bundle")));
    expect(problemsOf(missing)).toEqual([missing]);
  });
});
