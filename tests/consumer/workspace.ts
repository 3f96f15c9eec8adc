// What the packaging, consumer and docs tests share: the published packages of the
// workspace, packing them the way a release does, and a clean environment for child
// package-manager runs.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

export const ROOT = path.resolve(import.meta.dirname, "..", "..");

export interface PublishedPackage {
  readonly name: string;
  readonly version: string;
  readonly dir: string;
  /** Subpaths of `exports` that are code entries (`.`, `./testing`, …), not `./package.json`. */
  readonly entries: readonly string[];
  readonly manifest: Record<string, unknown>;
}

/** Every non-private package under `packages/`, in folder order. */
export function publishedPackages(): PublishedPackage[] {
  const base = path.join(ROOT, "packages");
  return readdirSync(base)
    .map((name) => path.join(base, name))
    .filter((dir) => statSync(path.join(dir, "package.json"), { throwIfNoEntry: false })?.isFile())
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as Record<string, unknown> }))
    .filter(({ manifest }) => manifest.private !== true)
    .map(({ dir, manifest }) => ({
      name: manifest.name as string,
      version: manifest.version as string,
      dir,
      entries: Object.keys((manifest.exports ?? {}) as Record<string, unknown>).filter((entry) => !entry.endsWith(".json")),
      manifest,
    }));
}

/** The file name `pnpm pack` gives a package's tarball. */
export function tarballName(pkg: Pick<PublishedPackage, "name" | "version">): string {
  return `${pkg.name.replace(/^@/, "").replace("/", "-")}-${pkg.version}.tgz`;
}

/**
 * The environment for a child pnpm: the parent's, minus the `npm_*` / `pnpm_*` settings a
 * `pnpm test` run exports (they are read as configuration and would leak the workspace's
 * settings into a scratch project).
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm|pnpm)_/i.test(key) && key !== "PNPM_HOME") continue;
    env[key] = value;
  }
  return { ...env, COREPACK_ENABLE_DOWNLOAD_PROMPT: "0", TURBO_TELEMETRY_DISABLED: "1", NO_COLOR: "1", ...extra };
}

export const run = promisify(execFile);

/**
 * Packs every published package into `destination` with one `pnpm pack` over the
 * workspace, as `changeset publish` would (workspace: ranges become versions). Returns
 * the tarball path of each package by name.
 */
export async function packAll(destination: string, packages = publishedPackages()): Promise<Map<string, string>> {
  const filters = packages.flatMap((pkg) => ["--filter", pkg.name]);
  await run("pnpm", ["-r", ...filters, "pack", "--pack-destination", destination], {
    cwd: ROOT,
    env: childEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  return new Map(packages.map((pkg) => [pkg.name, path.join(destination, tarballName(pkg))]));
}
