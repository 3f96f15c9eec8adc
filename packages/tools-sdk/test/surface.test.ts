import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

const dist = path.resolve(import.meta.dirname, "../dist");

describe("package surface", () => {
  it("the root entry imports nothing from node: (importable anywhere)", () => {
    for (const file of ["index.js", "index.cjs"]) {
      const text = readFileSync(path.join(dist, file), "utf8");
      const specifiers = [...text.matchAll(/(?:from\s+|require\(|import\()\s*["']([^"']+)["']/g)].map((match) => match[1]!);
      const builtins = specifiers.filter((specifier) => specifier.startsWith("node:") || builtinModules.includes(specifier));
      expect(builtins, file).toEqual([]);
      // Only relative chunks of the package itself may be imported: no runtime dependency.
      expect(specifiers.filter((specifier) => !specifier.startsWith("./")), file).toEqual([]);
    }
  });
});
