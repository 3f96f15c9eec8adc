import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileTokenStore, McpBridge, MCP_ERROR_CODES } from "../src/index.js";
import { followAuthorization } from "./oauth-browser.js";
import { hostStep, notes, REDIRECT, startService } from "./oauth-service.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mcp-oauth-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function discoverAndCall(
  bridge: McpBridge,
  label: string,
): Promise<{ unavailable: readonly { code: string; message: string }[]; text: string | undefined; scopes: readonly string[] | undefined; messages: string }> {
  const session = bridge.openSession(label);
  const { unavailable, catalogs } = await session.discover(["notes"]);
  const result = catalogs.length > 0 ? await session.callTool("notes", "whoami", {}, {}) : undefined;
  const scopes = session.authorizedScopes("notes");
  await session.close();
  return { unavailable, text: result?.output?.text, scopes, messages: JSON.stringify({ unavailable, catalogs, result }) };
}

describe("OAuth 2.1 for streamable-HTTP providers", () => {
  it("M8 E6 the host's step runs once; the tokens live only in a 0600 store bound to provider and resource, and reach no result or error", async () => {
    const { mcp } = await startService();
    const file = path.join(scratch, "first", "tokens.json");
    const store = new FileTokenStore(file);
    const authorization = hostStep(store);
    const bridge = new McpBridge([notes(mcp)], { authorization });
    const first = await discoverAndCall(bridge, "first");
    expect(first.unavailable).toEqual([]);
    expect(first.text).toBe("user-1 [notes:read notes:write]");
    // M8: what the journal records of the call: the token's scopes, never the token.
    expect(first.scopes).toEqual(expect.arrayContaining(["notes:read", "notes:write"]));
    expect(authorization.runs).toHaveLength(1);
    // PKCE, the resource indicator and state are on the authorization request.
    const asked = authorization.runs[0]!.searchParams;
    expect(asked.get("code_challenge_method")).toBe("S256");
    expect(asked.get("resource")).toBe(mcp);
    expect(asked.get("state")).toMatch(/.{16,}/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = await store.load({ namespace: "notes", resource: mcp });
    const token = stored?.tokens?.access_token;
    expect(token).toMatch(/.{20,}/);
    expect(stored?.tokens?.refresh_token).toMatch(/.{20,}/);
    // A second bridge on the same store needs no step.
    const again = new McpBridge([notes(mcp)], { authorization });
    expect((await discoverAndCall(again, "again")).text).toBe("user-1 [notes:read notes:write]");
    expect(authorization.runs).toHaveLength(1);
    for (const secret of [token!, stored!.tokens!.refresh_token!]) {
      expect(first.messages).not.toContain(secret);
    }
    await Promise.all([bridge.dispose(), again.dispose()]);
  });

  it("M8 without a host step a provider that needs authorization is unavailable, saying how to authorize it, and nothing is registered", async () => {
    const { mcp } = await startService();
    const store = new FileTokenStore(path.join(scratch, "no-step", "tokens.json"));
    const bridge = new McpBridge([notes(mcp)], { authorization: { store } });
    const { unavailable } = await discoverAndCall(bridge, "no-step");
    expect(unavailable[0]?.code).toBe(MCP_ERROR_CODES.authorizationRequired);
    expect(unavailable[0]?.message).toContain("authorize it with the host first, outside a turn");
    expect(await store.load({ namespace: "notes", resource: mcp })).toBeUndefined();
    await bridge.dispose();
    // The host's own words for how its user authorizes a provider.
    const worded = new McpBridge([notes(mcp)], { authorization: { store, howToAuthorize: (namespace) => `ask an admin to sign ${namespace} in` } });
    const again = await discoverAndCall(worded, "no-step-worded");
    expect(again.unavailable[0]?.message).toContain("ask an admin to sign notes in");
    await worded.dispose();
  });

  it("M8 an expired access token is refreshed without the host's step", async () => {
    const { mcp } = await startService({ ACCESS_TTL: "1" });
    const store = new FileTokenStore(path.join(scratch, "refresh", "tokens.json"));
    const authorization = hostStep(store);
    const bridge = new McpBridge([notes(mcp)], { authorization });
    expect((await discoverAndCall(bridge, "before")).text).toBe("user-1 [notes:read notes:write]");
    const before = (await store.load({ namespace: "notes", resource: mcp }))?.tokens?.access_token;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const after = await discoverAndCall(bridge, "after");
    expect(after.unavailable).toEqual([]);
    expect(after.text).toBe("user-1 [notes:read notes:write]");
    expect(authorization.runs).toHaveLength(1);
    expect((await store.load({ namespace: "notes", resource: mcp }))?.tokens?.access_token).not.toBe(before);
    await bridge.dispose();
  });

  it("M8 E6 a machine host gets its token with client_credentials from a secret named by its variable", async () => {
    const secret = "machine-secret-CANARY-0042";
    const { mcp } = await startService({ MACHINE_CLIENT: "reports-host", MACHINE_SECRET: secret });
    process.env.OPENWORKER_TEST_MACHINE_SECRET = secret;
    const store = new FileTokenStore(path.join(scratch, "machine", "tokens.json"));
    const bridge = new McpBridge(
      [
        notes(mcp, {
          oauth: { grant: "client_credentials", clientId: "reports-host", clientSecretEnv: "OPENWORKER_TEST_MACHINE_SECRET", scopes: ["notes:read"] },
        }),
      ],
      {
        authorization: { store },
      },
    );
    const result = await discoverAndCall(bridge, "machine");
    delete process.env.OPENWORKER_TEST_MACHINE_SECRET;
    expect(result.unavailable).toEqual([]);
    expect(result.text).toMatch(/^reports-host \[notes:read/);
    expect(result.messages).not.toContain(secret);
    await bridge.dispose();
  });

  it("M8 a redirect whose state is not the flow's is refused, and no token is stored", async () => {
    const { mcp } = await startService();
    const store = new FileTokenStore(path.join(scratch, "forged", "tokens.json"));
    const bridge = new McpBridge([notes(mcp)], {
      authorization: {
        store,
        redirectUrl: async () => REDIRECT,
        authorize: async ({ authorizationUrl }) => {
          const redirect = new URL(await followAuthorization(authorizationUrl, REDIRECT));
          redirect.searchParams.set("state", "forged");
          return redirect;
        },
      },
    });
    const { unavailable } = await discoverAndCall(bridge, "forged");
    expect(unavailable[0]?.code).toBe(MCP_ERROR_CODES.authorizationFailed);
    expect(unavailable[0]?.message).toContain("state does not match");
    expect((await store.load({ namespace: "notes", resource: mcp }))?.tokens).toBeUndefined();
    await bridge.dispose();
  });

  it("M8 a token store that is not one fails with a coded error naming the file", async () => {
    const { mcp } = await startService();
    const file = path.join(scratch, "broken.json");
    writeFileSync(file, "{ not json");
    const bridge = new McpBridge([notes(mcp)], { authorization: hostStep(new FileTokenStore(file)) });
    const { unavailable } = await discoverAndCall(bridge, "broken");
    expect(unavailable[0]?.message).toContain(`the MCP token store ${file} is not JSON`);
    expect(readFileSync(file, "utf8")).toBe("{ not json");
    await bridge.dispose();
  });
});
