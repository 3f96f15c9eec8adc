import { describe, expect, it } from "vitest";
import { parseServersFile, ToolRegistry } from "../src/index.js";
import { thrown } from "./helpers.js";

describe("OAuth settings of streamable-HTTP providers", () => {
  it("M8 registerMcpHttp and servers.json keep oauth settings; true stands for the defaults", () => {
    const registry = new ToolRegistry();
    registry.registerMcpHttp({ namespace: "notes", url: "http://127.0.0.1:8123/mcp", oauth: { scopes: ["notes:read"], clientId: "cli" } });
    expect(registry.providers()[0]).toMatchObject({ oauth: { scopes: ["notes:read"], clientId: "cli" } });
    const [defaults, machine] = parseServersFile(
      JSON.stringify({
        servers: {
          reports: {
            transport: "streamable_http",
            url: "http://127.0.0.1:9000/mcp",
            oauth: { grant: "client_credentials", clientId: "host", clientSecretEnv: "REPORTS_SECRET" },
          },
          plain: { transport: "streamable_http", url: "http://127.0.0.1:9001/mcp", oauth: true },
        },
      }),
      "servers.json",
    );
    // Providers come sorted by namespace.
    expect(machine).toMatchObject({ oauth: { grant: "client_credentials", clientId: "host", clientSecretEnv: "REPORTS_SECRET" } });
    expect(defaults).toMatchObject({ oauth: {} });
  });

  it("M8 a malformed oauth setting fails naming the field, and a secret never goes in the definition", () => {
    const register = (oauth: unknown) =>
      thrown(() => new ToolRegistry().registerMcpHttp({ namespace: "notes", url: "http://127.0.0.1:8123/mcp", oauth } as never));
    expect(register({ grant: "password" }).message).toContain('field "oauth.grant" must be "authorization_code" or "client_credentials"');
    expect(register({ clientSecret: "s3cret" }).message).toContain('field "oauth.clientSecret" is not known');
    expect(register({ clientSecretEnv: "not a name" }).message).toContain('field "oauth.clientSecretEnv" must name an environment variable');
    expect(register({ scopes: ["a b"] }).message).toContain('field "oauth.scopes"');
    expect(register({ grant: "client_credentials" }).message).toContain("needs clientId and clientSecretEnv");
    expect(register({ clientMetadataUrl: "http://example.invalid/client" }).message).toContain("must be an https URL");
    expect(register({ grant: "password" }).code).toBe("PROVIDER_INVALID");
    expect(thrown(() => new ToolRegistry().registerMcp({ namespace: "local", program: "/bin/true", args: [], oauth: {} } as never)).message).toContain(
      'field "oauth" is not known',
    );
  });
});
