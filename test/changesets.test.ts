import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, publishedPackages, ROOT, run } from "../tests/consumer/workspace.js";

// Releasing: `changeset version` in a temporary clone of the repository (the
// workspace's node_modules linked in, no install) first applies the pending changesets,
// then a sample patch changeset, and the versions and changelogs come out as the release
// steps in CONTRIBUTING.md say.
const PRIVATE_PACKAGES = ["apps/example-host", "examples/example-tools", "examples/notification-tools", "examples/acer-mcp"];
const git = ["-c", "user.name=release-test", "-c", "user.email=release-test@example.invalid", "-c", "commit.gpgsign=false"];

let clone: string;
const packages = publishedPackages().map((pkg) => ({ name: pkg.name, folder: path.relative(ROOT, pkg.dir) }));

interface Snapshot {
  readonly versions: Record<string, string>;
  readonly changelogs: Record<string, string>;
}

function snapshot(): Snapshot {
  const versions: Record<string, string> = {};
  const changelogs: Record<string, string> = {};
  for (const { name, folder } of packages) {
    versions[name] = (JSON.parse(readFileSync(path.join(clone, folder, "package.json"), "utf8")) as { version: string }).version;
    const changelog = path.join(clone, folder, "CHANGELOG.md");
    changelogs[name] = existsSync(changelog) ? readFileSync(changelog, "utf8") : "";
  }
  return { versions, changelogs };
}

function changesetVersion() {
  return run(path.join(clone, "node_modules", ".bin", "changeset"), ["version"], { cwd: clone, env: childEnv(), timeout: 60_000 });
}

function patchOf(version: string): string {
  const [major, minor, patch] = version.split(".").map(Number);
  return `${major}.${minor}.${patch! + 1}`;
}

/** The section of a changelog for one version, up to the next version heading. */
function section(changelog: string, version: string): string {
  const start = changelog.indexOf(`## ${version}\n`);
  if (start < 0) return "";
  const next = changelog.indexOf("\n## ", start + 1);
  return changelog.slice(start, next < 0 ? undefined : next);
}

let pending: { file: string; releases: Record<string, string>; summary: string }[];
let before: Snapshot;
let firstRelease: Snapshot;

beforeAll(async () => {
  clone = mkdtempSync(path.join(tmpdir(), "ow-changesets-"));
  await run("git", ["clone", "--quiet", ROOT, clone], { env: childEnv() });
  symlinkSync(path.join(ROOT, "node_modules"), path.join(clone, "node_modules"), "dir");
  pending = readdirSync(path.join(clone, ".changeset"))
    .filter((file) => file.endsWith(".md") && file !== "README.md")
    .map((file) => {
      const text = readFileSync(path.join(clone, ".changeset", file), "utf8");
      const [, header = "", body = ""] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text) ?? [];
      const releases = Object.fromEntries([...header.matchAll(/^"([^"]+)":\s*(major|minor|patch)\s*$/gm)].map((match) => [match[1]!, match[2]!]));
      return { file, releases, summary: body.trim().split("\n")[0]! };
    });
  before = snapshot();
  await changesetVersion();
  firstRelease = snapshot();
}, 120_000);

afterAll(() => {
  if (clone) rmSync(clone, { recursive: true, force: true });
});

describe("changeset version", () => {
  it("the pending changesets name only published packages, with a bump and a summary", () => {
    expect(pending.length).toBeGreaterThan(0);
    const published = new Set(packages.map((pkg) => pkg.name));
    for (const changeset of pending) {
      expect(Object.keys(changeset.releases).length, changeset.file).toBeGreaterThan(0);
      for (const name of Object.keys(changeset.releases)) expect(published.has(name), `${changeset.file}: ${name}`).toBe(true);
      expect(changeset.summary, changeset.file).not.toBe("");
    }
  });

  it("applying them consumes every changeset, bumps each named package, and writes each summary into its changelog", () => {
    const left = readdirSync(path.join(clone, ".changeset")).filter((file) => file.endsWith(".md") && file !== "README.md");
    expect(left).toEqual([]);
    for (const changeset of pending) {
      for (const [name, bump] of Object.entries(changeset.releases)) {
        const version = firstRelease.versions[name]!;
        expect(version, name).not.toBe(before.versions[name]);
        const entries = section(firstRelease.changelogs[name]!, version);
        expect(entries, `${name} ${version}`).toContain(`### ${bump[0]!.toUpperCase()}${bump.slice(1)} Changes`);
        expect(entries, `${name} ${version}`).toContain(changeset.summary);
      }
    }
  });

  it("each published package's tarball carries the CHANGELOG.md the release wrote (files), and its LICENSE", async () => {
    for (const { name, folder } of packages) {
      // What `npm pack` would put in the tarball (the clone has no dist/; pnpm packs by the same rules).
      const { stdout } = await run("npm", ["pack", "--dry-run", "--json"], { cwd: path.join(clone, folder), env: childEnv(), timeout: 60_000 });
      const [{ files }] = JSON.parse(stdout) as [{ files: { path: string }[] }];
      expect(
        files.map((file) => file.path),
        name,
      ).toEqual(expect.arrayContaining(["CHANGELOG.md", "LICENSE", "README.md", "package.json"]));
    }
  }, 60_000);

  it("private packages are neither versioned nor given a changelog", () => {
    for (const folder of PRIVATE_PACKAGES) {
      const manifest = JSON.parse(readFileSync(path.join(clone, folder, "package.json"), "utf8")) as { version: string; private: boolean };
      expect(manifest.private, folder).toBe(true);
      expect(manifest.version, folder).toBe("0.0.0");
      expect(existsSync(path.join(clone, folder, "CHANGELOG.md")), folder).toBe(false);
    }
  });

  it("a sample patch of the journal patches it and its internal dependents (journal-postgres, runtime and what depends on them) with 'Updated dependencies', and nothing else", async () => {
    await run("git", [...git, "add", "-A", "packages", ".changeset"], { cwd: clone, env: childEnv() });
    await run("git", [...git, "commit", "--quiet", "-m", "release"], { cwd: clone, env: childEnv() });
    writeFileSync(
      path.join(clone, ".changeset", "sample-journal-fix.md"),
      '---\n"@openworker/journal": patch\n---\n\nSample fix: verify names the session of a break.\n',
    );
    await changesetVersion();
    const after = snapshot();
    const v = firstRelease.versions;
    expect(after.versions).toEqual({
      ...v,
      "@openworker/journal": patchOf(v["@openworker/journal"]!),
      "@openworker/journal-postgres": patchOf(v["@openworker/journal-postgres"]!),
      "@openworker/runtime": patchOf(v["@openworker/runtime"]!),
      "@openworker/cli": patchOf(v["@openworker/cli"]!),
      "@openworker/harness-client": patchOf(v["@openworker/harness-client"]!),
      "@openworker/otel": patchOf(v["@openworker/otel"]!),
      "@openworker/model-openai": patchOf(v["@openworker/model-openai"]!),
      "@openworker/model-ai-sdk": patchOf(v["@openworker/model-ai-sdk"]!),
    });
    expect(section(after.changelogs["@openworker/journal"]!, after.versions["@openworker/journal"]!)).toContain(
      "### Patch Changes\n\n- Sample fix: verify names the session of a break.",
    );
    for (const dependent of ["@openworker/runtime", "@openworker/cli"]) {
      const entries = section(after.changelogs[dependent]!, after.versions[dependent]!);
      expect(entries, dependent).toContain("- Updated dependencies");
      expect(entries, dependent).toContain(`  - @openworker/journal@${after.versions["@openworker/journal"]}`);
    }
    for (const dependent of ["@openworker/cli", "@openworker/harness-client", "@openworker/otel", "@openworker/model-openai", "@openworker/model-ai-sdk"]) {
      // Under "Updated dependencies" with other entries, or as the only entry.
      expect(section(after.changelogs[dependent]!, after.versions[dependent]!), dependent).toMatch(
        new RegExp(`^ *- @openworker/runtime@${after.versions["@openworker/runtime"]!.replaceAll(".", "\\.")}$`, "m"),
      );
    }
    for (const unchanged of ["@openworker/tools-sdk", "@openworker/registry", "@openworker/bundle-resolver", "@openworker/mcp-bridge", "@openworker/sandbox"]) {
      expect(after.changelogs[unchanged], unchanged).toBe(firstRelease.changelogs[unchanged]);
    }
  });
});
