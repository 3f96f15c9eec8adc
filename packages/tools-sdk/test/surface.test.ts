import { readdirSync, readFileSync } from "node:fs";
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
      expect(
        specifiers.filter((specifier) => !specifier.startsWith("./")),
        file,
      ).toEqual([]);
    }
  });
});

describe("error codes", () => {
  it("every code the SDK's source throws or reports is in SDK_ERROR_CODES (a host matches on the constant)", async () => {
    const { SDK_ERROR_CODES } = await import("../src/index.js");
    const { FAULT_CODES } = await import("../src/execution/index.js");
    const known = new Set<string>([...Object.values(SDK_ERROR_CODES), ...Object.values(FAULT_CODES)]);
    const src = path.resolve(import.meta.dirname, "../src");
    const files = readdirSync(src, { recursive: true }).filter((file): file is string => typeof file === "string" && file.endsWith(".ts"));
    const used = new Set<string>();
    for (const file of files) {
      const text = readFileSync(path.join(src, file), "utf8");
      for (const match of text.matchAll(/(?:OpenWorkerError\(\s*|code: |breach\(|refuse\(\w+, )"([A-Z][A-Z0-9_]{3,})"/g)) used.add(match[1]!);
    }
    expect(used.size).toBeGreaterThan(5);
    expect([...used].filter((code) => !known.has(code))).toEqual([]);
  });
});
