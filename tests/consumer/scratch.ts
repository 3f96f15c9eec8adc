// A consumer project outside the workspace, built from the packed tarballs: what a partner
// or a host gets from `npm install @openworker/…`, with the guides' code laid out in it.
//
//   <scratch>/tarballs/            the packed packages
//   <scratch>/package.json         depends on the tarballs (overrides pin internal deps to them)
//   <scratch>/glossary-tools/      docs/snippets/partner (the partner package of the guide)
//   <scratch>/my-host/             docs/snippets/host + docs/snippets/operate (the host of the guide)
//   <scratch>/checks/              tests/consumer/fixture (import probes, a CommonJS consumer)
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { childEnv, packAll, publishedPackages, ROOT, run } from "./workspace.js";

export interface ScratchProject {
  readonly dir: string;
  readonly tarballs: ReadonlyMap<string, string>;
  /** What `pnpm install` printed (append-only reporter). */
  readonly installOutput: string;
  readonly partner: string;
  readonly host: string;
  readonly checks: string;
}

/** Third-party packages the consumer installs itself, at the versions the workspace locks. */
const OWN_DEPENDENCIES = {
  typebox: "1.4.3",
  "@modelcontextprotocol/sdk": "1.32.2",
  zod: "4.6.7",
};
const OWN_DEV_DEPENDENCIES = { typescript: "5.9.3", "@types/node": "20.19.43", tsup: "8.5.1" };

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

export async function createScratchProject(): Promise<ScratchProject> {
  const dir = mkdtempSync(path.join(tmpdir(), "ow-consumer-"));
  const tarballDir = path.join(dir, "tarballs");
  mkdirSync(tarballDir);
  const tarballs = await packAll(tarballDir, publishedPackages());
  const fileSpecs = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]));
  const rootManifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { packageManager: string };
  writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify(
      {
        name: "openworker-consumer",
        private: true,
        type: "module",
        // Pinned so corepack runs the workspace's pnpm instead of asking the network for one.
        packageManager: rootManifest.packageManager,
        dependencies: { ...fileSpecs, ...OWN_DEPENDENCIES },
        devDependencies: OWN_DEV_DEPENDENCIES,
        pnpm: { overrides: fileSpecs },
      },
      null,
      2,
    ),
  );
  // The host guide's pnpm settings: without them pnpm 10 skips better-sqlite3's build script.
  cpSync(path.join(ROOT, "docs", "snippets", "host", "pnpm-workspace.yaml"), path.join(dir, "pnpm-workspace.yaml"));
  const { stdout, stderr } = await run(
    "pnpm",
    // From the workspace's store where it can: `--offline` failed on a machine whose pnpm had
    // never resolved a version (a frozen-lockfile install writes no registry metadata), and
    // this project resolves its own third-party versions.
    ["install", "--prefer-offline", "--config.side-effects-cache=true", "--reporter=append-only", "--config.confirm-modules-purge=false"],
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
  return { dir, tarballs, installOutput: `${stdout}${stderr}`, partner, host, checks };
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
