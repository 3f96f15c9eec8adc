import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// SPEC's picture: dependencies point one way. Each workspace package may depend only on
// the packages listed here (and on third-party packages).
const ALLOWED: Record<string, readonly string[]> = {
  "@openworker/tools-sdk": [],
  "@openworker/registry": ["@openworker/tools-sdk"],
  "@openworker/bundle-resolver": ["@openworker/registry", "@openworker/tools-sdk"],
  "@openworker/mcp-bridge": ["@openworker/registry", "@openworker/tools-sdk"],
  "@openworker/journal": ["@openworker/tools-sdk"],
  // The journal's store on PostgreSQL: an adapter of the journal's store seam. Runtime and registry are for its tests.
  "@openworker/journal-postgres": ["@openworker/journal", "@openworker/tools-sdk", "@openworker/runtime", "@openworker/registry"],
  // The ready sandbox launcher: it implements the bridge's SandboxLauncher contract.
  "@openworker/sandbox": ["@openworker/mcp-bridge", "@openworker/registry", "@openworker/tools-sdk"],
  "@openworker/runtime": ["@openworker/bundle-resolver", "@openworker/registry", "@openworker/mcp-bridge", "@openworker/journal", "@openworker/tools-sdk"],
  // Model providers implement the runtime's ModelProvider contract; the runtime never depends on them.
  "@openworker/model-openai": ["@openworker/runtime", "@openworker/tools-sdk", "@openworker/registry"],
  "@openworker/model-ai-sdk": ["@openworker/runtime", "@openworker/tools-sdk", "@openworker/model-openai", "@openworker/registry"],
  // The host side of `serve --stdio`: the runtime's and the bridge's types describe its wire.
  "@openworker/harness-client": ["@openworker/runtime", "@openworker/mcp-bridge", "@openworker/tools-sdk"],
  "@openworker/cli": [
    "@openworker/harness-client",
    "@openworker/runtime",
    "@openworker/model-openai",
    "@openworker/model-ai-sdk",
    "@openworker/bundle-resolver",
    "@openworker/registry",
    "@openworker/mcp-bridge",
    "@openworker/sandbox",
    "@openworker/journal",
    "@openworker/journal-postgres",
    "@openworker/tools-sdk",
  ],
  // Optional telemetry beside the runtime: it reads the runtime's events, and the runtime
  // never depends on it (nor on OpenTelemetry). Registry and SDK are for its tests.
  "@openworker/otel": ["@openworker/runtime", "@openworker/registry", "@openworker/tools-sdk"],
  // Partner packages are built against the SDK only.
  "example-tools": ["@openworker/tools-sdk"],
  "notification-tools": ["@openworker/tools-sdk"],
  "acer-mcp": [],
  "example-host": ["@openworker/cli", "@openworker/registry", "@openworker/tools-sdk", "example-tools", "notification-tools", "acer-mcp"],
};

const root = path.resolve(import.meta.dirname, "..");
const workspace = ["packages", "apps", "examples"].flatMap((group) =>
  readdirSync(path.join(root, group))
    .map((name) => path.join(root, group, name))
    .filter((dir) => {
      try {
        return statSync(path.join(dir, "package.json")).isFile();
      } catch {
        return false;
      }
    }),
);
const manifests = workspace.map((dir) => ({ dir, json: JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) }));
const names = new Set(manifests.map((manifest) => manifest.json.name as string));

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist" || entry.name === "fixtures") continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.(ts|mts|cts|mjs|js)$/.test(entry.name)) out.push(full);
  }
  return out;
}

/** Repository files a package's `bench/` scripts may import (see the import rule below). */
const BENCH_HELPERS = new Set(["scripts/proc-stats.mjs"]);

describe("architecture", () => {
  it("every workspace package is known to the dependency rules", () => {
    expect([...names].sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  it("dependencies point one way (SPEC's picture): no back-edge", () => {
    const problems: string[] = [];
    for (const { json } of manifests) {
      const declared = Object.keys({ ...json.dependencies, ...json.devDependencies, ...json.peerDependencies });
      for (const dependency of declared.filter((name) => names.has(name))) {
        if (!ALLOWED[json.name]?.includes(dependency)) problems.push(`${json.name} must not depend on ${dependency}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("no source imports another package's src/ or dist/ internals, or a workspace package it does not declare", () => {
    const problems: string[] = [];
    for (const { dir, json } of manifests) {
      const declared = new Set(Object.keys({ ...json.dependencies, ...json.devDependencies }));
      for (const file of ["src", "test", "bin", "bench", "demo"].flatMap((sub) => {
        try {
          return sourceFiles(path.join(dir, sub));
        } catch {
          return [];
        }
      })) {
        const text = readFileSync(file, "utf8");
        for (const match of text.matchAll(/(?:from\s+|import\(\s*|require\(\s*)["']([^"']+)["']/g)) {
          const specifier = match[1]!;
          const where = path.relative(root, file);
          if (specifier.startsWith(".")) {
            const target = path.resolve(path.dirname(file), specifier);
            // Bench scripts run only in this repository (`pnpm bench`; no package publishes
            // them): they may share its bench helpers, and nothing else outside the package.
            const benchHelper = path.relative(dir, file).startsWith(`bench${path.sep}`) && BENCH_HELPERS.has(path.relative(root, target));
            if (!target.startsWith(dir + path.sep) && !benchHelper) problems.push(`${where} reaches outside its package: ${specifier}`);
            continue;
          }
          const packageName = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!;
          if (!names.has(packageName)) continue;
          if (/\/(src|dist)(\/|$)/.test(specifier.slice(packageName.length))) problems.push(`${where} deep-imports ${specifier}`);
          if (!declared.has(packageName) && packageName !== json.name) problems.push(`${where} imports undeclared ${packageName}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("published packages export named entries only, with types per condition (and per subpath for node10) and no wildcard", () => {
    const problems: string[] = [];
    for (const { json } of manifests.filter((manifest) => !manifest.json.private)) {
      if (json.type !== "module") problems.push(`${json.name}: type must be module`);
      if (json.sideEffects !== false) problems.push(`${json.name}: sideEffects must be false`);
      if (JSON.stringify(json.files) !== '["dist","CHANGELOG.md"]') problems.push(`${json.name}: files must be ["dist", "CHANGELOG.md"]`);
      for (const [subpath, target] of Object.entries(json.exports as Record<string, unknown>)) {
        if (subpath.includes("*")) problems.push(`${json.name}: wildcard export ${subpath}`);
        if (subpath === "./package.json") continue;
        const conditions = target as Record<string, { types?: string; default?: string }>;
        for (const condition of ["import", "require"]) {
          if (!conditions[condition]?.types || !conditions[condition]?.default) problems.push(`${json.name} ${subpath}: ${condition} needs types and default`);
        }
        // moduleResolution node10 ignores exports: a subpath reaches it only through typesVersions.
        const mapped = (json.typesVersions as Record<string, Record<string, string[]>> | undefined)?.["*"]?.[subpath.slice(2)];
        if (subpath !== "." && JSON.stringify(mapped) !== JSON.stringify([conditions.import?.types])) {
          problems.push(`${json.name} ${subpath}: typesVersions must map "${subpath.slice(2)}" to ["${conditions.import?.types}"]`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("internal entries are named internal and serve the workspace only: partners, guides and the journal's values stay off them", () => {
    const problems: string[] = [];
    for (const { json } of manifests.filter((manifest) => !manifest.json.private)) {
      for (const subpath of Object.keys(json.exports as Record<string, unknown>)) {
        if (["./execution", "./validation"].includes(subpath)) problems.push(`${json.name} ${subpath}: an internal seam belongs under ./internal`);
      }
    }
    const partnerFacing = [
      ...manifests.filter(({ dir }) => dir.includes(`${path.sep}examples${path.sep}`)).flatMap(({ dir }) => sourceFiles(path.join(dir, "src"))),
      ...sourceFiles(path.join(root, "docs", "snippets")),
    ];
    for (const file of partnerFacing) {
      if (/["']@openworker\/[^"']+\/internal(\/|["'])/.test(readFileSync(file, "utf8")))
        problems.push(`${path.relative(root, file)} imports an internal entry`);
    }
    // The journal hashes with node:crypto: loading the schema compiler (ajv) for a digest costs every host's startup.
    for (const file of sourceFiles(path.join(root, "packages", "journal", "src"))) {
      for (const match of readFileSync(file, "utf8").matchAll(/^import (?!type )[^;]*from "(@openworker\/tools-sdk\/internal\/validation|ajv)"/gm)) {
        problems.push(`${path.relative(root, file)} loads ${match[1]}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("no package barrel re-exports with export *", () => {
    const offenders = manifests
      .map(({ dir }) => path.join(dir, "src", "index.ts"))
      .filter((file) => {
        try {
          return /export\s+\*/.test(readFileSync(file, "utf8"));
        } catch {
          return false;
        }
      });
    expect(offenders).toEqual([]);
  });
});
