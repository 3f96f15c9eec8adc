import { describe, expect, it } from "vitest";
import { OpenWorkerError, ToolError, toolError } from "../src/index.js";

describe("error model", () => {
  it("T1 ToolError carries code and message and is recognised by brand, not instanceof", () => {
    const error = toolError("NOT_FOUND", "no such note");
    expect(error.code).toBe("NOT_FOUND");
    expect(error.message).toBe("no such note");
    expect(ToolError.isInstance(error)).toBe(true);
    // A copy made by another package instance: same brand, different class.
    const foreign = Object.assign(new Error("x"), { [Symbol.for("openworker.tool-error")]: true, code: "X" });
    expect(ToolError.isInstance(foreign)).toBe(true);
    expect(ToolError.isInstance(new Error("plain"))).toBe(false);
    expect(OpenWorkerError.isInstance(error)).toBe(false);
  });

  it("T1 refuses an empty or malformed ToolError code", () => {
    expect(() => new ToolError("", "m")).toThrow(TypeError);
    expect(() => new ToolError("has space", "m")).toThrow(/A-Z a-z 0-9/);
    // The usual slip from other error classes: the message alone. The error says the order.
    const messageOnly = ToolError as unknown as new (message: string) => ToolError;
    expect(() => new messageOnly("no note named x")).toThrow('the code comes first, then the message: new ToolError("NOT_FOUND"');
  });

  it("OpenWorkerError keeps code, details and cause", () => {
    const cause = new Error("root");
    const error = new OpenWorkerError("ALIAS_COLLISION", "a.b__c and a.b.c", { cause, details: { left: "a.b__c" } });
    expect(OpenWorkerError.hasCode(error, "ALIAS_COLLISION")).toBe(true);
    expect(error.details).toEqual({ left: "a.b__c" });
    expect(error.cause).toBe(cause);
  });
});
