import { describe, expect, it } from "vitest";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { parseServersFile, ToolRegistry } from "../src/index.js";

const FILE = "/app/servers.json";

function errorOf(run: () => unknown): OpenWorkerError {
  try {
    run();
  } catch (error) {
    if (OpenWorkerError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an error");
}

const parse = (args: unknown) => () => parseServersFile(JSON.stringify({ servers: { acer: { transport: "stdio", command: "/bin/acer", args } } }), FILE);

describe("servers.json args: the item and its problem", () => {
  it("M1 an argument that is not a string is named by its index and type", () => {
    const error = errorOf(parse(["x", 5]));
    expect(error.message).toMatch(/field "args\[1\]" must be a string \(each argument is one string\), got number$/);
    expect(error.message).toContain(FILE);
    expect(error.details).toMatchObject({ field: "args[1]" });
  });

  it("M1 an argument carrying a NUL is named by its index, with the NUL as the problem", () => {
    const error = errorOf(parse(["ok", "a\u0000b"]));
    expect(error.message).toMatch(/field "args\[1\]" contains a NUL character/);
    expect(error.message).not.toMatch(/got/);
  });

  it("M1 args that are not an array still say so", () => {
    expect(errorOf(parse("--quiet")).message).toMatch(/field "args" must be an array of strings$/);
  });

  it("M1 registerMcp names the item too", () => {
    const registry = new ToolRegistry();
    const error = errorOf(() => registry.registerMcp({ namespace: "acer", program: "/bin/acer", args: ["--quiet", null as unknown as string] }));
    expect(error.message).toMatch(/field "args\[1\]" must be a string \(each argument is one string\), got null$/);
  });
});
