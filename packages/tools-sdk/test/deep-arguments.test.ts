import { describe, expect, it } from "vitest";
import { argumentsFailure, readArgumentsText, readHostArguments } from "../src/execution/index.js";

/** `{"a":{"a":…{}}}`, `depth` objects deep. */
function nested(depth: number): unknown {
  let value: unknown = {};
  for (let level = 1; level < depth; level += 1) value = { a: value };
  return value;
}

describe("arguments nested past any stack (E5)", () => {
  it.each([129, 20_000, 200_000])("E5 host arguments %i levels deep are refused as too deep, never as a stack overflow", (depth) => {
    const reading = readHostArguments(nested(depth));
    expect(reading).toEqual({ ok: false, tooDeep: true });
    if (reading.ok) return;
    expect(argumentsFailure(reading)).toEqual({ code: "ARGUMENTS_INVALID", message: "arguments nest deeper than 128 levels; send flatter arguments" });
  });

  it("E5 arguments text 100,000 levels deep (within the size bound) is refused as too deep", () => {
    expect(readArgumentsText(`${"[".repeat(100_000)}${"]".repeat(100_000)}`)).toEqual({ ok: false, tooDeep: true });
  });

  it("E5 128 levels still pass", () => {
    expect(readHostArguments(nested(128))).toMatchObject({ ok: true });
  });
});
