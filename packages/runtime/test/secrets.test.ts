import { canonicalJson } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import { Redactor } from "../src/secrets.js";

describe("redaction (E6)", () => {
  it("E6 masks a secret inside keys and values, and keeps an own \"__proto__\" key a key", () => {
    const redactor = new Redactor(["s3cr3t-value-123"]);
    const args = JSON.parse('{"__proto__":{"token":"s3cr3t-value-123"},"s3cr3t-value-123":1,"plain":"x"}') as unknown;
    const clean = redactor.json(args);
    expect(canonicalJson(clean)).toBe('{"[redacted]":1,"__proto__":{"token":"[redacted]"},"plain":"x"}');
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
    expect(redactor.json({ untouched: "text" })).toEqual({ untouched: "text" });
  });
});
