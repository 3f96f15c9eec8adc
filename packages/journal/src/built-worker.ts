import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * A worker thread's built file (`name`): beside the module that starts it (`here`, its
 * `import.meta.url`: the package's `dist/`, or a bundle that ships the file beside
 * itself), else the package's `dist/` seen from its sources (tests run the sources;
 * `pnpm test` builds first). `undefined` when neither exists.
 */
export function builtWorker(name: string, here: string): string | undefined {
  for (const candidate of [`./${name}`, `../dist/${name}`]) {
    const file = fileURLToPath(new URL(candidate, here));
    if (existsSync(file)) return file;
  }
  return undefined;
}
