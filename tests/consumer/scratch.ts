// A consumer project outside the workspace that installs `@openworker/*` by name from a
// registry the release published to: what a partner or a host gets from
// `npm install @openworker/…`, with the guides' code laid out in it.
//
//   <scratch>/.npmrc               sends @openworker/* to the release's registry
//   <scratch>/package.json         depends on the released versions by name
//   <scratch>/glossary-tools/      docs/snippets/partner (the partner package of the guide)
//   <scratch>/my-host/             docs/snippets/host + docs/snippets/operate (the host of the guide)
//   <scratch>/checks/              tests/consumer/fixture (import probes, a CommonJS consumer)
import { cpSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Release } from "./release.js";
import { childEnv, ROOT, run } from "./workspace.js";

export interface ScratchProject {
  readonly dir: string;
  /** What `pnpm install` printed (append-only reporter). */
  readonly installOutput: string;
  readonly partner: string;
  readonly host: string;
  readonly checks: string;
}

/** Third-party packages the consumer installs itself, at the versions the workspace locks. */
export const OWN_DEPENDENCIES = {
  typebox: "1.4.3",
  "@modelcontextprotocol/server": "2.4.0",
  "@modelcontextprotocol/server-memory": "2026.8.31",
  zod: "4.6.7",
};
export const OWN_DEV_DEPENDENCIES = { typescript: "5.9.3", "@types/node": "24.19.4", tsup: "8.5.1" };

/**
 * The one type-check of everything (slow with `skipLibCheck: false`, so done once), with
 * the strictest options a consumer may turn on: the packed declarations must hold there too.
 */
const CHECK_TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    noEmit: true,
    types: ["node"],
  },
  include: ["glossary-tools/src", "my-host/src", "checks/cjs-consumer/src"],
};

export async function createScratchProject(release: Release): Promise<ScratchProject> {
  const dir = mkdtempSync(path.join(tmpdir(), "ow-consumer-"));
  const released = Object.fromEntries(Object.entries(release.versions).map(([name, version]) => [name, `^${version}`]));
  const rootManifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { packageManager: string };
  writeFileSync(path.join(dir, ".npmrc"), release.registry.npmrc);
  writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify(
      {
        name: "openworker-consumer",
        private: true,
        type: "module",
        // Pinned so corepack runs the workspace's pnpm instead of asking the network for one.
        packageManager: rootManifest.packageManager,
        dependencies: { ...released, ...OWN_DEPENDENCIES },
        devDependencies: OWN_DEV_DEPENDENCIES,
      },
      null,
      2,
    ),
  );
  // The host guide's pnpm settings (which install scripts run).
  cpSync(path.join(ROOT, "docs", "snippets", "host", "pnpm-workspace.yaml"), path.join(dir, "pnpm-workspace.yaml"));
  const { stdout, stderr } = await run(
    "pnpm",
    // Third-party packages from the workspace's store where it can: `--offline` failed on a
    // machine whose pnpm had never resolved a version (a frozen-lockfile install writes no
    // registry metadata), and this project resolves its own third-party versions.
    ["install", "--prefer-offline", "--reporter=append-only", "--config.confirm-modules-purge=false"],
    { cwd: dir, env: childEnv(), maxBuffer: 64 * 1024 * 1024 },
  );

  const partner = path.join(dir, "glossary-tools");
  const host = path.join(dir, "my-host");
  const checks = path.join(dir, "checks");
  cpSync(path.join(ROOT, "docs", "snippets", "partner"), partner, { recursive: true });
  cpSync(path.join(ROOT, "docs", "snippets", "host"), host, { recursive: true });
  cpSync(path.join(ROOT, "docs", "snippets", "operate"), host, { recursive: true });
  // The host guide uses the partner's tsconfig.json as is.
  cpSync(path.join(partner, "tsconfig.json"), path.join(host, "tsconfig.json"));
  cpSync(path.join(ROOT, "tests", "consumer", "fixture"), checks, { recursive: true });
  // What a workspace or `npm link` does for a host that depends on a local partner package.
  symlinkSync(partner, path.join(dir, "node_modules", "glossary-tools"), "dir");
  writeFileSync(path.join(dir, "tsconfig.check.json"), JSON.stringify(CHECK_TSCONFIG, null, 2));
  return { dir, installOutput: `${stdout}${stderr}`, partner, host, checks };
}

/** Runs the scratch project's own `tsc`. */
export function tsc(project: ScratchProject, args: readonly string[]) {
  return run(path.join(project.dir, "node_modules", ".bin", "tsc"), [...args], { cwd: project.dir, env: childEnv(), maxBuffer: 64 * 1024 * 1024 });
}

/** Builds the guide's host as its `build` script does, minus the type-check (the one full check is separate). */
export async function bundle(project: ScratchProject, folder: string): Promise<void> {
  await run(path.join(project.dir, "node_modules", ".bin", "tsup"), [], { cwd: folder, env: childEnv(), maxBuffer: 64 * 1024 * 1024 });
}

/** Emits a project's JavaScript and declarations without type-checking (the one full check is separate). */
export async function emit(project: ScratchProject, folder: string): Promise<void> {
  await tsc(project, ["-p", folder, "--noCheck"]);
}

export interface NpmProject {
  readonly dir: string;
  /** The guide's partner package, installed with `npm install` on its own. */
  readonly partner: string;
  /** The guide's host, installed with `npm install`, its partner package as a local folder. */
  readonly host: string;
  /** What each `npm install` printed. */
  readonly installOutput: string;
}

/**
 * The two guides followed with npm instead of pnpm: the partner package and the host each
 * in its own folder with its own `npm install`, `@openworker/*` by name from the release's
 * registry. The host names the partner package by its folder, as `npm install ../glossary-tools` writes.
 */
export async function createNpmProject(release: Release): Promise<NpmProject> {
  const dir = mkdtempSync(path.join(tmpdir(), "ow-npm-consumer-"));
  const partner = path.join(dir, "glossary-tools");
  const host = path.join(dir, "my-host");
  cpSync(path.join(ROOT, "docs", "snippets", "partner"), partner, { recursive: true });
  cpSync(path.join(ROOT, "docs", "snippets", "host"), host, { recursive: true });
  cpSync(path.join(partner, "tsconfig.json"), path.join(host, "tsconfig.json"));
  const hostManifest = path.join(host, "package.json");
  const manifest = JSON.parse(readFileSync(hostManifest, "utf8")) as { dependencies: Record<string, string> };
  manifest.dependencies["glossary-tools"] = "file:../glossary-tools";
  writeFileSync(hostManifest, `${JSON.stringify(manifest, null, 2)}\n`);
  let installOutput = "";
  for (const folder of [partner, host]) {
    writeFileSync(path.join(folder, ".npmrc"), release.registry.npmrc);
    const { stdout, stderr } = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--foreground-scripts"], {
      cwd: folder,
      env: childEnv(),
      maxBuffer: 64 * 1024 * 1024,
    });
    installOutput += `${stdout}${stderr}`;
  }
  return { dir, partner, host, installOutput };
}
