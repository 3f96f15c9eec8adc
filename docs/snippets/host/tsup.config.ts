import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { defineConfig, type Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

const outDir = path.resolve("dist");
// Every program in src/ (the host, and any script beside it) becomes one file in dist/;
// registry.ts is the module they share.
const programs = readdirSync("src").filter((file) => file.endsWith(".ts") && file !== "registry.ts");

/** Native addons cannot be bundled: import better-sqlite3 by its path from dist/, where its importer found it. */
const nativeBeside: Plugin = {
  name: "native-beside",
  setup(build) {
    build.onResolve({ filter: /^better-sqlite3$/ }, (args) => {
      const file = createRequire(path.join(args.resolveDir, "importer.js")).resolve(args.path);
      return { path: path.relative(outDir, file).split(path.sep).join("/"), external: true };
    });
  },
};

// One file per program: its bytes are the "host executable" of each session's execution
// identity, so the partner packages and OpenWorker's own code must be inside it.
export default defineConfig({
  entry: Object.fromEntries(programs.map((file) => [path.basename(file, ".ts"), `src/${file}`])),
  format: ["esm"],
  target: "node22",
  platform: "node",
  clean: true,
  sourcemap: true,
  splitting: false,
  noExternal: [/.*/],
  esbuildPlugins: [nativeBeside],
  banner: {
    // Bundled CommonJS dependencies call require() for Node built-ins.
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
});
