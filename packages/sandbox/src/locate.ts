import { accessSync, constants, existsSync, realpathSync, statSync } from "node:fs";
import path from "node:path";

/** An executable file's absolute path: `name` itself when it has a slash, else the first match on `searchPath`. */
export function findProgram(name: string, searchPath: string | undefined, cwd: string | undefined): string | undefined {
  if (name.includes("/")) {
    const full = path.resolve(cwd ?? process.cwd(), name);
    return isExecutableFile(full) ? full : undefined;
  }
  for (const dir of (searchPath ?? "").split(":")) {
    if (dir === "" || !path.isAbsolute(dir)) continue;
    const full = path.join(dir, name);
    if (isExecutableFile(full)) return full;
  }
  return undefined;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The folder a Node.js binary was installed into (`<prefix>/bin/node` gives `<prefix>`). */
export function nodeInstall(nodeBinary: string): string {
  return path.dirname(path.dirname(realpathSync(nodeBinary)));
}

/** The paths to show the program at: as named and, when that is a link, where it leads. */
export function programPaths(program: string): string[] {
  const real = realpathSync(program);
  return real === program ? [program] : [program, real];
}

export function exists(file: string): boolean {
  return existsSync(file);
}
