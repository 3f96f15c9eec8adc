import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LIMITS, modelAlias, OpenWorkerError, parseQualifiedName, validateNamespace, validateQualifiedName } from "../src/index.js";
import { captureError } from "../src/testing/index.js";

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    if (OpenWorkerError.isInstance(error)) return error.code;
    throw error;
  }
  return undefined;
}

it("T7 captureError returns the coded error a partner's test asserts on", () => {
  expect(captureError(() => validateQualifiedName("openworker.x")).code).toBe("NAMESPACE_RESERVED");
  expect(() => captureError(() => undefined)).toThrow(/nothing was thrown/);
});

describe("qualified names", () => {
  it("N1 splits at the first dot only", () => {
    expect(parseQualifiedName("acer.acer_care.center")).toEqual({ namespace: "acer", tool: "acer_care.center" });
  });

  it.each([
    ["", "NAME_EMPTY"],
    ["example.web search", "NAME_INVALID_CHARACTER"],
    ["example.wéb", "NAME_INVALID_CHARACTER"],
    ["example/web", "NAME_INVALID_CHARACTER"],
    ["web_search", "NAME_NOT_QUALIFIED"],
    [".web_search", "NAME_NOT_QUALIFIED"],
    ["example.", "NAME_NOT_QUALIFIED"],
  ])("N1 rejects %j with %s", (name, code) => {
    expect(codeOf(() => validateQualifiedName(name))).toBe(code);
  });

  it("N1 N2 a model alias given where a qualified name belongs is refused, naming the qualified name it stands for", () => {
    const message = (name: string) => {
      try {
        validateQualifiedName(name);
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    };
    expect(message("shipping__track")).toContain('"shipping__track" looks like a model alias: its qualified name is "shipping.track"');
    expect(message("web_search")).not.toContain("model alias");
    expect(message("__x")).not.toContain("model alias");
  });

  it("N1 is case-sensitive: Example.Tool and example.tool are different names", () => {
    expect(validateQualifiedName("Example.Tool")).toEqual({ namespace: "Example", tool: "Tool" });
    expect(modelAlias("Example.Tool")).not.toBe(modelAlias("example.tool"));
  });

  it("N2 derives the alias by replacing every dot with __", () => {
    expect(modelAlias("example.web_search")).toBe("example__web_search");
    expect(modelAlias("a.b.c")).toBe("a__b__c");
  });

  it("N3 reserves the openworker namespace, in any letter case", () => {
    expect(codeOf(() => validateQualifiedName("openworker.shell"))).toBe("NAMESPACE_RESERVED");
    expect(codeOf(() => validateQualifiedName("OpenWorker.shell"))).toBe("NAMESPACE_RESERVED");
    expect(codeOf(() => validateQualifiedName("openworkers.shell"))).toBeUndefined();
  });

  it("N4 accepts a name whose alias is exactly 80 bytes; longer names or aliases fail", () => {
    const ok = `n.${"x".repeat(77)}`; // 79 bytes, alias 80
    expect(modelAlias(ok).length).toBe(80);
    expect(codeOf(() => validateQualifiedName(ok))).toBeUndefined();
    expect(codeOf(() => validateQualifiedName(`${ok}x`))).toBe("ALIAS_TOO_LONG"); // 80 bytes, alias 81
    expect(codeOf(() => validateQualifiedName(`${ok}xx`))).toBe("NAME_TOO_LONG"); // 81 bytes
  });

  it("N4 refuses a name that fits but whose alias does not", () => {
    const name = `n.${"a.".repeat(38)}b`; // 79 bytes, 38 extra dots
    expect(name.length).toBeLessThanOrEqual(LIMITS.nameBytes);
    const error = (() => {
      try {
        validateQualifiedName(name);
      } catch (caught) {
        return caught as OpenWorkerError;
      }
      return undefined;
    })();
    expect(error?.code).toBe("ALIAS_TOO_LONG");
    expect(error?.message).toContain(modelAlias(name));
  });

  it("N2 N4 property: every valid name yields a deterministic alias of [A-Za-z0-9_-]{1,80}", () => {
    const part = fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/);
    const name = fc.tuple(part, fc.array(part, { minLength: 1, maxLength: 4 })).map(([ns, rest]) => `${ns}.${rest.join(".")}`);
    fc.assert(
      fc.property(name, (candidate) => {
        let valid = true;
        try {
          validateQualifiedName(candidate);
        } catch (error) {
          if (!OpenWorkerError.isInstance(error)) throw error;
          valid = false;
        }
        const alias = modelAlias(candidate);
        expect(modelAlias(candidate)).toBe(alias);
        if (valid) expect(alias).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
      }),
    );
  });

  it("N3 N2 refuses a namespace whose aliases fall among openworker's own (openworker__shell.run is openworker.shell.run to the model)", () => {
    expect(modelAlias("openworker__shell.run")).toBe(modelAlias("openworker.shell.run"));
    for (const name of ["openworker__shell.run", "OpenWorker__Shell.run", "openworker_._run", "openworker___x.y"]) {
      const error = captureError(() => validateQualifiedName(name));
      expect(error.code, name).toBe("NAMESPACE_RESERVED");
      expect(error.message).toContain("openworker__");
    }
    expect(codeOf(() => validateNamespace("openworker__core"))).toBe("NAMESPACE_RESERVED");
    // Only the alias space is reserved: a namespace that merely starts with the word is not.
    for (const name of ["openworker_tools.run", "openworkers.run", "my_openworker__x.run"])
      expect(
        codeOf(() => validateQualifiedName(name)),
        name,
      ).toBeUndefined();
    // Property: every name that is valid has an alias outside openworker__ (in any letter case).
    const part = fc.stringMatching(/^[A-Za-z0-9_-]{1,14}$/);
    fc.assert(
      fc.property(fc.constantFrom("openworker", "OpenWorker", "openworker_", "openworker__", ""), part, part, (prefix, namespace, tool) => {
        const name = `${prefix}${namespace}.${tool}`;
        if (codeOf(() => validateQualifiedName(name)) === undefined) expect(modelAlias(name).toLowerCase().startsWith("openworker__"), name).toBe(false);
      }),
    );
  });
});
