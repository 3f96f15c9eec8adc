import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, packAll, publishedPackages, ROOT, run } from "../tests/consumer/workspace.js";

// Packaging: every published package, packed exactly as a release packs it, is
// publint-clean and its declarations resolve the way arethetypeswrong checks them: for ESM
// and CJS consumers, for bundlers, and for TypeScript's `moduleResolution: node10`, which
// ignores `exports` (the subpaths, such as `@openworker/tools-sdk/testing`, reach it through
// `typesVersions`).
const packages = publishedPackages();
const APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30";
const attwBin = path.join(ROOT, "node_modules", ".bin", "attw");

interface AttwProblem {
  readonly kind: string;
  readonly entrypoint?: string;
  readonly resolutionKind?: string;
}

let folder: string;
let tarballs: Map<string, string>;
const attwRuns = new Map<string, Promise<{ exitCode: number; problems: AttwProblem[]; output: string }>>();

function attw(tarball: string): Promise<{ exitCode: number; problems: AttwProblem[]; output: string }> {
  return run(attwBin, [tarball, "--format", "json", "--no-color"], {
    cwd: ROOT,
    env: childEnv(),
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    ({ stdout }) => ({ exitCode: 0, output: stdout, problems: problemsOf(stdout) }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      exitCode: typeof error.code === "number" ? error.code : 1,
      output: `${error.stdout ?? ""}${error.stderr ?? ""}`,
      problems: problemsOf(error.stdout ?? ""),
    }),
  );
}

function problemsOf(json: string): AttwProblem[] {
  try {
    const report = JSON.parse(json) as { problems?: Record<string, AttwProblem[]> };
    return Object.values(report.problems ?? {}).flat();
  } catch {
    return [{ kind: `unreadable attw output: ${json.slice(0, 200)}` }];
  }
}

beforeAll(async () => {
  folder = mkdtempSync(path.join(tmpdir(), "ow-packaging-"));
  tarballs = await packAll(folder, packages);
  // attw loads its own TypeScript per run: two at a time keeps a busy 2-core box responsive.
  const queue = [...tarballs];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [name, tarball] = next;
      const pending = attw(tarball);
      attwRuns.set(name, pending);
      await pending;
    }
  };
  void Promise.all([worker(), worker()]);
  // Every run is registered before a test awaits it.
  while (attwRuns.size < tarballs.size) await new Promise((resolve) => setTimeout(resolve, 5));
}, 120_000);

afterAll(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** Packs a folder the way npm lays out a tarball (`package/…`), without running a package manager. */
async function tarFolder(source: string, tarball: string): Promise<void> {
  const staging = path.join(folder, "staging", path.basename(tarball, ".tgz"));
  mkdirSync(staging, { recursive: true });
  cpSync(source, path.join(staging, "package"), { recursive: true });
  await run("tar", ["-czf", tarball, "-C", staging, "package"]);
}

async function publintMessages(file: string): Promise<string[]> {
  const bytes = readFileSync(file);
  const tarball = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const { messages, pkg: manifest } = await publint({ pack: { tarball }, level: "suggestion", strict: true });
  return messages.map((message) => `${message.type} ${message.code}: ${formatMessage(message, manifest) ?? ""}`);
}

async function listTarball(tarball: string): Promise<string[]> {
  const { stdout } = await run("tar", ["-tzf", tarball]);
  return stdout.split("\n").filter(Boolean);
}

async function packedManifest(tarball: string): Promise<Record<string, unknown>> {
  const { stdout } = await run("tar", ["-xzOf", tarball, "package/package.json"]);
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe("packaging", () => {
  it("the repository's LICENSE is the Apache License 2.0 text, unmodified (SHA-256 of apache.org's LICENSE-2.0.txt)", () => {
    expect(
      createHash("sha256")
        .update(readFileSync(path.join(ROOT, "LICENSE")))
        .digest("hex"),
    ).toBe(APACHE_2_0_SHA256);
  });

  it("every package under packages/ is published and has code entries", () => {
    expect(packages.map((pkg) => pkg.name).sort()).toEqual([
      "@openworker/bundle-resolver",
      "@openworker/cli",
      "@openworker/harness-client",
      "@openworker/journal",
      "@openworker/journal-postgres",
      "@openworker/mcp-bridge",
      "@openworker/model-ai-sdk",
      "@openworker/model-openai",
      "@openworker/otel",
      "@openworker/registry",
      "@openworker/runtime",
      "@openworker/sandbox",
      "@openworker/tools-sdk",
    ]);
    for (const pkg of packages) expect(pkg.entries, pkg.name).toContain(".");
  });

  describe.each(packages.map((pkg) => [pkg.name, pkg] as const))("%s", (name, pkg) => {
    it("packs only package.json, README.md, LICENSE, CHANGELOG.md (once a release wrote it) and dist/, with no workspace: ranges left", async () => {
      const tarball = tarballs.get(name)!;
      const files = await listTarball(tarball);
      expect(files.filter((file) => !/^package\/(package\.json|README\.md|LICENSE|CHANGELOG\.md|dist\/.+)$/.test(file))).toEqual([]);
      expect(files).toContain("package/README.md");
      const manifest = await packedManifest(tarball);
      // The license the manifest names ships as its text: the repository's Apache 2.0 LICENSE.
      expect(manifest.license).toBe("Apache-2.0");
      expect(files).toContain("package/LICENSE");
      expect((await run("tar", ["-xzOf", tarball, "package/LICENSE"])).stdout).toBe(readFileSync(path.join(ROOT, "LICENSE"), "utf8"));
      const ranges = { ...(manifest.dependencies as object), ...(manifest.peerDependencies as object) } as Record<string, string>;
      expect(Object.entries(ranges).filter(([, range]) => range.startsWith("workspace:"))).toEqual([]);
      for (const [dependency, range] of Object.entries(ranges)) {
        if (dependency.startsWith("@openworker/")) expect(range, `${name} → ${dependency}`).toBe(pkg.version);
      }
    });

    it("is publint-clean (strict, suggestions included)", async () => {
      expect(await publintMessages(tarballs.get(name)!)).toEqual([]);
    });

    it("declarations resolve for ESM and CJS consumers, bundlers and node10, every entry (attw, strict profile)", async () => {
      const result = await attwRuns.get(name)!;
      expect(result.problems, result.output.slice(0, 2_000)).toEqual([]);
      expect(result.exitCode, result.output.slice(0, 2_000)).toBe(0);
    }, 120_000);
  });

  it("the checks catch the classic dual-format mistake (one .d.ts for import and require) in a control package", async () => {
    const tarball = path.join(folder, "broken-package-1.0.0.tgz");
    await tarFolder(path.join(ROOT, "tests", "consumer", "broken-package"), tarball);
    const result = await attw(tarball);
    expect(result.exitCode).not.toBe(0);
    expect(result.problems.filter((problem) => problem.resolutionKind !== "node10").map((problem) => problem.kind)).toContain("FalseESM");
    expect(await publintMessages(tarball)).not.toEqual([]);
  }, 120_000);
});
