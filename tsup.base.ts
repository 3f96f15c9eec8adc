import type { Options } from "tsup";

/**
 * The one build shape every published package shares: ESM + CJS + declarations
 * for each entry, Node 22 target, no bundling of dependencies.
 */
export function packageBuild(entry: Record<string, string>): Options {
  return {
    entry,
    format: ["esm", "cjs"],
    dts: true,
    clean: true,
    sourcemap: true,
    target: "node22",
    platform: "node",
    treeshake: true,
  };
}
