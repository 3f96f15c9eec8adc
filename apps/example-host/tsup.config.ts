import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { defineConfig, type Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

const outDir = path.resolve("dist");
// Native addons cannot be bundled: they stay outside host.js, imported by a path relative
// to it, so the built host runs from any clone without a hoisted node_modules.
const NATIVE = ["better-sqlite3"];

/** Rewrites `import "better-sqlite3"` to the package folder its importer would have found, relative to dist/. */
const nativeBeside: Plugin = {
  name: "native-beside",
  setup(build) {
    build.onResolve({ filter: new RegExp(`^(${NATIVE.join("|")})$`) }, (args) => {
      let dir = args.resolveDir;
      for (;;) {
        const candidate = path.join(dir, "node_modules", args.path);
        if (existsSync(candidate)) {
          const main = (JSON.parse(readFileSync(path.join(candidate, "package.json"), "utf8")) as { main?: string }).main ?? "index.js";
          const relative = path.relative(outDir, path.join(candidate, main)).split(path.sep).join("/");
          return { path: relative.startsWith(".") ? relative : `./${relative}`, external: true };
        }
        const parent = path.dirname(dir);
        if (parent === dir) return undefined;
        dir = parent;
      }
    });
  },
};

// One bundled file, dist/host.js: its bytes are the "host executable bytes" of every
// session's execution identity (A2), so the workspace packages, the partner packages and
// their pure-JS dependencies are all inside it. Heavy parts (MCP SDK, SQLite, OpenAI) are
// only evaluated when a command needs them (the CLI imports them dynamically).
export default defineConfig({
  entry: { host: "src/host.ts" },
  format: ["esm"],
  dts: false,
  clean: true,
  sourcemap: true,
  splitting: false,
  minify: true,
  keepNames: true,
  target: "node22",
  platform: "node",
  noExternal: [/.*/],
  esbuildPlugins: [nativeBeside],
  banner: {
    // Bundled CommonJS dependencies call require() for Node built-ins.
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
});
