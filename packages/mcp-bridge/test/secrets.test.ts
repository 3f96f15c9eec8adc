import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpBridge, providerSecrets, redact, redactArgs, redactUrlCredentials, safeBaseEnv, type McpSession } from "../src/index.js";
import { fixture, marker } from "./helpers.js";

const tag = marker("secrets");
const secret = "k3y-5"; // short, and configured: a known secret all the same
const hostile = { LC_HOSTILE_TOKEN: "lc-hostile-token-value", LC_MEASUREMENT: "C" };
let bridge: McpBridge;
let session: McpSession;

beforeAll(() => {
  Object.assign(process.env, hostile);
  bridge = new McpBridge(
    [
      {
        transport: "stdio",
        namespace: "careless",
        program: process.execPath,
        args: [fixture("secret-catalog.mjs")],
        env: { TEST_MARKER: tag, CATALOG_SECRET: secret },
      },
    ],
    { closeGraceMs: 300 },
  );
  session = bridge.openSession("secrets");
});

afterAll(async () => {
  for (const name of Object.keys(hostile)) delete process.env[name];
  await bridge.dispose();
  await bridge.joinCleanup();
});

describe("secrets of a stdio provider (E6)", () => {
  it("E6 LC_* variables whose names look secret never reach a stdio MCP child", async () => {
    expect(safeBaseEnv({ LC_ALL: "C", LC_HOSTILE_TOKEN: "x", LC_SESSION_COOKIE: "y" })).toEqual({ LC_ALL: "C" });
    await session.discover(["careless"]);
    const result = await session.callTool("careless", "env_of", {}, {});
    const names = JSON.parse(result.output?.text ?? "[]") as string[];
    expect(names).toContain("LC_MEASUREMENT");
    expect(names).not.toContain("LC_HOSTILE_TOKEN");
  });

  it("E6 a tool's title and description carrying the provider's configured secret are redacted in the catalog", async () => {
    const discovery = await session.discover(["careless"]);
    const lookup = discovery.catalogs[0]!.tools.find((tool) => tool.name === "lookup")!;
    expect(lookup.title).toBe("Lookup (key [redacted])");
    expect(lookup.description).toBe("Looks things up with the key [redacted].");
    expect(JSON.stringify(discovery)).not.toContain(secret);
  });
});

describe("credentials in URLs and launch arguments (E6)", () => {
  it("E6 the password of any scheme://user:password@host is masked, up to the authority's last @", () => {
    expect(redactUrlCredentials("DATABASE_URL=postgres://app:hunter2@db.local:5432/app")).toBe("DATABASE_URL=postgres://app:[redacted]@db.local:5432/app");
    expect(redactUrlCredentials('{"url":"redis://:p@ss:w0rd@cache/0"}')).toBe('{"url":"redis://:[redacted]@cache/0"}');
    for (const plain of ["http://127.0.0.1:8080/mcp", "https://user@host/x", "mail me@x.com at http://host:80 today", "no url"])
      expect(redactUrlCredentials(plain)).toBe(plain);
    expect(redact("failed: postgres://app:hunter2@db/app", [])).toBe("failed: postgres://app:[redacted]@db/app");
  });

  it("E6 servers.json args: URL passwords, secret-named flags and values shaped like API keys are masked, and are the provider's secrets", () => {
    const args = [
      "serve",
      "--token=abc",
      "--api-key",
      "key-value-1",
      "API_SECRET=s3cr3t-v",
      "Authorization: Bearer tok-value",
      "postgres://app:pw-value@db/app",
      "ghp_0123456789abcdefghijKLMN",
      "--auth",
      "--port",
      "8080",
    ];
    expect(redactArgs(args)).toEqual([
      "serve",
      "--token=[redacted]",
      "--api-key",
      "[redacted]",
      "API_SECRET=[redacted]",
      "Authorization: [redacted]",
      "postgres://app:[redacted]@db/app",
      "[redacted]",
      "--auth",
      "--port",
      "8080",
    ]);
    const secrets = providerSecrets({ transport: "stdio", namespace: "n", program: "srv", args });
    expect(secrets).toEqual(expect.arrayContaining(["key-value-1", "s3cr3t-v", "Bearer tok-value", "tok-value", "pw-value", "ghp_0123456789abcdefghijKLMN"]));
    expect(secrets).not.toContain("abc"); // shorter than MIN_SECRET_LENGTH: masked when shown, too common to redact everywhere
    expect(secrets).not.toContain("8080");
  });
});
