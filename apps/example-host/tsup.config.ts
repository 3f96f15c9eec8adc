import { existsSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { defineConfig, type Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

const outDir = path.resolve("dist");
// Native addons cannot be bundled: they stay outside host.js, required by a path relative
// to it, so the built host runs from any clone without a hoisted node_modules.
const NATIVE = ["better-sqlite3"];

/** `name`'s main file, in the package folder an importer in `from` would have found, relative to dist/. */
function besideDist(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (existsSync(candidate)) {
      const main = (JSON.parse(readFileSync(path.join(candidate, "package.json"), "utf8")) as { main?: string }).main ?? "index.js";
      const relative = path.relative(outDir, path.join(candidate, main)).split(path.sep).join("/");
      return relative.startsWith(".") ? relative : `./${relative}`;
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

const BUILTINS = new Set(builtinModules.flatMap((name) => (name.startsWith("node:") ? [name] : [name, `node:${name}`])));

/**
 * What stays outside host.js (Node's built-in modules, and the native addons, found beside dist/) is loaded by `require()`
 * when the bundled module that needs it is evaluated. Imported, every one the bundle names would be linked when host.js
 * loads, for every command: `node:http` alone loads Node's fetch, and they cost a third of the start of `--help`.
 */
const requiredOnDemand: Plugin = {
  name: "required-on-demand",
  setup(build) {
    build.onResolve({ filter: /.*/, namespace: "on-demand" }, (args) => ({ path: args.path, external: true }));
    build.onResolve({ filter: /^[\w:/.-]+$/ }, (args) => {
      if (BUILTINS.has(args.path)) return { path: args.path, namespace: "on-demand" };
      if (!NATIVE.includes(args.path)) return undefined;
      const beside = besideDist(args.path, args.resolveDir);
      return beside === undefined ? undefined : { path: beside, namespace: "on-demand" };
    });
    build.onLoad({ filter: /.*/, namespace: "on-demand" }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: "js" }));
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
  // Left as written: tsup would otherwise take `node:` imports before `requiredOnDemand` sees them.
  removeNodeProtocol: false,
  esbuildPlugins: [requiredOnDemand],
  esbuildOptions(options) {
    // The workspace packages' dist files import their shared chunks bare as well as by name; those packages
    // declare no side effects, so the bare imports are dropped as they allow, and saying so each build is noise.
    options.logOverride = { ...options.logOverride, "ignored-bare-import": "silent" };
  },
  banner: {
    // Bundled CommonJS dependencies call require() for Node built-ins.
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
});
