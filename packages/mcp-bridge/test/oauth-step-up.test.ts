import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileTokenStore, McpBridge, MCP_ERROR_CODES, type McpAuthorizationOptions, type McpSession } from "../src/index.js";
import { followAuthorization } from "./oauth-browser.js";
import { hostStep, notes, REDIRECT, startService } from "./oauth-service.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mcp-step-up-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// The service asks for notes:read first (its 401 challenge names it); add_note needs
// notes:write, which it asks for with a 403 insufficient_scope naming both.
const FIRST_SCOPE = { FIRST_SCOPE: "notes:read" };

/** A session that discovered `notes` and holds a notes:read token. */
async function readOnlySession(bridge: McpBridge, label: string): Promise<McpSession> {
  const session = bridge.openSession(label);
  const { unavailable } = await session.discover(["notes"]);
  expect(unavailable).toEqual([]);
  expect(session.authorizedScopes("notes")).toEqual(expect.arrayContaining(["notes:read"]));
  expect(session.authorizedScopes("notes")).not.toContain("notes:write");
  return session;
}

/** Every token the store holds for `mcp`, to look for in what the bridge wrote. */
async function tokensOf(store: FileTokenStore, mcp: string): Promise<string[]> {
  const tokens = (await store.load({ namespace: "notes", resource: mcp }))?.tokens;
  return [tokens?.access_token, tokens?.refresh_token].filter((token): token is string => typeof token === "string" && token.length > 0);
}

describe("step-up authorization during a call", () => {
  it("M8 E6 a call refused for insufficient scope runs the host's step for the wider scopes once and returns the tool's result", async () => {
    const { mcp } = await startService(FIRST_SCOPE);
    const store = new FileTokenStore(path.join(scratch, "step-up", "tokens.json"));
    const authorization = hostStep(store);
    const bridge = new McpBridge([notes(mcp)], { authorization });
    const session = await readOnlySession(bridge, "step-up");
    const before = await tokensOf(store, mcp);
    const result = await session.callTool("notes", "add_note", { text: "buy milk" }, {});
    expect(result.error).toBeUndefined();
    expect(result.outcome).toBe("succeeded");
    expect(result.output?.text).toBe("added: buy milk");
    expect(authorization.runs).toHaveLength(2);
    // The step asks for the union of the token's scopes and the ones the server named.
    expect(authorization.runs[1]!.searchParams.get("scope")?.split(" ")).toEqual(expect.arrayContaining(["notes:read", "notes:write"]));
    // What the journal records of later calls: the new token's scopes.
    expect(session.authorizedScopes("notes")).toEqual(expect.arrayContaining(["notes:read", "notes:write"]));
    expect((await session.callTool("notes", "whoami", {}, {})).output?.text).toBe("user-1 [notes:read notes:write]");
    const after = await tokensOf(store, mcp);
    expect(after[0]).not.toBe(before[0]);
    for (const token of [...before, ...after]) expect(JSON.stringify(result)).not.toContain(token);
    await session.close();
    await bridge.dispose();
  });

  it("M8 concurrent calls refused for insufficient scope, in two sessions, share one host step", async () => {
    const { mcp } = await startService(FIRST_SCOPE);
    const store = new FileTokenStore(path.join(scratch, "shared", "tokens.json"));
    const authorization = hostStep(store);
    const bridge = new McpBridge([notes(mcp)], { authorization });
    const first = await readOnlySession(bridge, "shared-1");
    const second = await readOnlySession(bridge, "shared-2");
    expect(authorization.runs).toHaveLength(1);
    const results = await Promise.all([
      first.callTool("notes", "add_note", { text: "a" }, {}),
      first.callTool("notes", "add_note", { text: "b" }, {}),
      first.callTool("notes", "add_note", { text: "c" }, {}),
      second.callTool("notes", "add_note", { text: "d" }, {}),
    ]);
    expect(results.map((result) => result.output?.text ?? result.error?.message)).toEqual(["added: a", "added: b", "added: c", "added: d"]);
    expect(authorization.runs).toHaveLength(2);
    await Promise.all([first.close(), second.close()]);
    await bridge.dispose();
  });

  it("M8 E6 without a host step a call refused for insufficient scope fails with MCP_AUTHORIZATION_REQUIRED naming the provider and the missing scopes", async () => {
    const { mcp } = await startService(FIRST_SCOPE);
    const store = new FileTokenStore(path.join(scratch, "no-step", "tokens.json"));
    // The host authorized the provider outside the turn, for notes:read.
    const outside = new McpBridge([notes(mcp)], { authorization: hostStep(store) });
    await (await readOnlySession(outside, "outside")).close();
    await outside.dispose();
    const stored = await store.load({ namespace: "notes", resource: mcp });
    const bridge = new McpBridge([notes(mcp)], { authorization: { store, howToAuthorize: (namespace) => `run \`host auth login ${namespace}\`` } });
    const session = await readOnlySession(bridge, "no-step");
    const result = await session.callTool("notes", "add_note", { text: "x" }, {});
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe(MCP_ERROR_CODES.authorizationRequired);
    expect(result.error?.message).toContain('MCP provider "notes"');
    expect(result.error?.message).toContain("notes:write");
    expect(result.error?.message).toContain("run `host auth login notes`");
    for (const token of await tokensOf(store, mcp)) expect(JSON.stringify(result)).not.toContain(token);
    // Nothing changed in the store, and the connection still serves what the token allows.
    expect(await store.load({ namespace: "notes", resource: mcp })).toEqual(stored);
    expect((await session.callTool("notes", "whoami", {}, {})).outcome).toBe("succeeded");
    await session.close();
    await bridge.dispose();
  });

  it("M8 a call refused again after the step-up fails with MCP_AUTHORIZATION_FAILED and the host is not asked again", async () => {
    // The user grants notes:read only, whatever the client asks for.
    const { mcp } = await startService({ ...FIRST_SCOPE, GRANT_ONLY: "notes:read" });
    const store = new FileTokenStore(path.join(scratch, "again", "tokens.json"));
    const authorization = hostStep(store);
    const bridge = new McpBridge([notes(mcp)], { authorization });
    const session = await readOnlySession(bridge, "again");
    const result = await session.callTool("notes", "add_note", { text: "x" }, {});
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe(MCP_ERROR_CODES.authorizationFailed);
    expect(result.error?.message).toContain("notes:write");
    expect(result.error?.message).toContain("not asked again");
    expect(authorization.runs).toHaveLength(2);
    for (const token of await tokensOf(store, mcp)) expect(JSON.stringify(result)).not.toContain(token);
    // A later call is a new call: it may ask once more, and only once.
    expect((await session.callTool("notes", "add_note", { text: "y" }, {})).error?.code).toBe(MCP_ERROR_CODES.authorizationFailed);
    expect(authorization.runs).toHaveLength(3);
    await session.close();
    await bridge.dispose();
  });

  it("M8 a host step that fails, or outlasts the call's bound, fails the call with MCP_AUTHORIZATION_FAILED", async () => {
    const { mcp } = await startService(FIRST_SCOPE);
    const store = new FileTokenStore(path.join(scratch, "failing", "tokens.json"));
    let mode: "follow" | "fail" | "hang" = "follow";
    const signals: AbortSignal[] = [];
    const authorization: McpAuthorizationOptions = {
      store,
      redirectUrl: async () => REDIRECT,
      authorize: async ({ authorizationUrl, signal }) => {
        if (mode === "follow") return followAuthorization(authorizationUrl, REDIRECT);
        if (mode === "fail") throw new Error("the user closed the window");
        signals.push(signal);
        return new Promise<string>((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));
      },
    };
    const bridge = new McpBridge([notes(mcp)], { authorization });
    const session = await readOnlySession(bridge, "failing");
    mode = "fail";
    const failed = await session.callTool("notes", "add_note", { text: "x" }, {});
    expect(failed.error?.code).toBe(MCP_ERROR_CODES.authorizationFailed);
    expect(failed.error?.message).toContain('MCP provider "notes"');
    expect(failed.error?.message).toContain("the user closed the window");
    expect(failed.error?.message).toContain("notes:write");
    mode = "hang";
    const started = performance.now();
    const bounded = await session.callTool("notes", "add_note", { text: "x" }, { timeoutMs: 1_000 });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(bounded.error?.code).toBe(MCP_ERROR_CODES.authorizationFailed);
    expect(bounded.error?.message).toContain("within the call's 1000 ms bound");
    // The host's step is told the call no longer waits for it.
    expect(signals[0]?.aborted).toBe(true);
    await session.close();
    await bridge.dispose();
  });
});
