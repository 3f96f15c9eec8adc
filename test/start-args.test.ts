import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script, typed by its JSDoc only.
import { drivesRealModel } from "../scripts/start-args.mjs";

describe("pnpm start's arguments", () => {
  it.each([
    [["--base-url", "http://127.0.0.1:11434/v1", "--model", "m"], true],
    [["--base-url=http://127.0.0.1:11434/v1", "--model=m"], true],
    [["--provider", "openai", "--base-url", "u"], true],
    [["--provider=openai"], true],
    [[], false],
    [["--provider", "scripted"], false],
    [["--model", "--base-url-is-not-this"], false],
  ])("%j drives a real model: %s", (args, expected) => {
    expect(drivesRealModel(args)).toBe(expected);
  });
});
