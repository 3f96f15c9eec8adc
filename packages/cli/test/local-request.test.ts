import { describe, expect, it } from "vitest";
import { checkLocalRequest } from "../src/mcp/local-request.js";

// The DNS-rebinding guard of `serve --mcp --http`, on its own: what it accepts is exactly
// the README's list (127.0.0.1, localhost, [::1] on our port), as clients spell them.
describe("serve --mcp --http Host and Origin check", () => {
  const port = 4321;
  it.each([
    [{ host: "127.0.0.1:4321" }],
    [{ host: "localhost:4321" }],
    [{ host: "LOCALHOST:4321" }],
    [{ host: "[::1]:4321" }],
    [{ host: "127.0.0.1:4321", origin: "http://localhost:3000" }],
    [{ host: "127.0.0.1:4321", origin: "https://127.0.0.1" }],
    [{ host: "127.0.0.1:4321", origin: "http://[::1]:8080" }],
  ])("accepts %j", (headers) => {
    expect(checkLocalRequest(headers, port)).toEqual({ ok: true });
  });

  it.each([
    [{}, "has no Host header"],
    [{ host: "attacker.example:4321" }, "is not this machine's loopback address"],
    // Spellings a URL parser normalizes to 127.0.0.1, which no client sends.
    [{ host: "127.1:4321" }, "is not this machine's loopback address"],
    [{ host: "0x7f.0.0.1:4321" }, "is not this machine's loopback address"],
    [{ host: "2130706433:4321" }, "is not this machine's loopback address"],
    [{ host: "[0:0:0:0:0:0:0:1]:4321" }, "is not this machine's loopback address"],
    [{ host: "user@127.0.0.1:4321" }, "is not this machine's loopback address"],
    [{ host: "127.0.0.1:4322" }, "does not name port 4321"],
    [{ host: "127.0.0.1" }, "does not name port 4321"],
    [{ host: "127.0.0.1:04321" }, "does not name port 4321"],
    [{ host: "127.0.0.1:4321", origin: "http://attacker.example" }, "is not a local origin"],
    [{ host: "127.0.0.1:4321", origin: "http://127.1" }, "is not a local origin"],
    [{ host: "127.0.0.1:4321", origin: "file://localhost" }, "is not a local origin"],
    [{ host: "127.0.0.1:4321", origin: "null" }, "is not a local origin"],
  ])("refuses %j", (headers, reason) => {
    const verdict = checkLocalRequest(headers, port);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? "" : verdict.reason).toContain(reason);
  });
});
