import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, FIXTURE_HOST, type Ran, REPO, runEntry, tempDir, waitForOutput, writeBundle } from "./helpers.js";

// `auth login|status|logout` against an OAuth-protected MCP service and a real
// authorization server (oidc-provider), both on 127.0.0.1, started by the test.
const temp = tempDir("auth");
let service: ChildProcess;
let servers: string;

beforeAll(async () => {
  service = spawn(process.execPath, [path.join(REPO, "packages/mcp-bridge/test/fixtures/oauth-service.mjs")], { stdio: ["ignore", "pipe", "ignore"] });
  const { mcp } = JSON.parse(await new Promise<string>((resolve) => createInterface({ input: service.stdout! }).once("line", resolve))) as { mcp: string };
  servers = path.join(temp.dir, "servers.json");
  writeFileSync(
    servers,
    JSON.stringify({
      servers: { notes: { transport: "streamable_http", url: mcp }, local: { transport: "stdio", command: process.execPath, args: ["-e", ""] } },
    }),
  );
});

afterAll(() => {
  service.kill();
  temp.cleanup();
});

/** A user who opens the printed URL: follows the authorization server's redirects (login and consent are granted at once) to the CLI's loopback callback, and visits it. */
async function actAsUser(authorizationUrl: string): Promise<void> {
  const cookies = new Map<string, string>();
  let next = new URL(authorizationUrl);
  const redirect = new URL(next.searchParams.get("redirect_uri")!);
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(next, { redirect: "manual", headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") } });
    if (next.origin === redirect.origin && next.pathname === redirect.pathname) {
      expect(response.status).toBe(200);
      return;
    }
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      cookies.set(pair.slice(0, pair.indexOf("=")).trim(), pair.slice(pair.indexOf("=") + 1));
    }
    next = new URL(response.headers.get("location")!, next);
  }
  throw new Error("the authorization server redirected too often");
}

const globals = () => ["--servers", servers, "--workspace", temp.dir];

/** `auth login notes` as a user runs it: the printed URL opened, the redirect taken. */
async function login(): Promise<{ ran: Ran; canaries: string[] }> {
  const child = spawn(process.execPath, [FIXTURE_HOST, "auth", "login", "notes", ...globals()], { stdio: ["ignore", "pipe", "pipe"] });
  const done = collect(child);
  const said = await waitForOutput(child.stderr!, (text) => /https?:\/\/\S+\/auth\?\S+/.test(text));
  await actAsUser(said.match(/(https?:\/\/\S+\/auth\?\S+)/)![1]!);
  const ran = await done;
  const tokenFile = path.join(temp.dir, ".openworker", "mcp-tokens.json");
  const entries = (JSON.parse(readFileSync(tokenFile, "utf8")) as { entries: Record<string, { tokens: { access_token: string; refresh_token: string } }> })
    .entries;
  return { ran, canaries: Object.values(entries).flatMap((entry) => [entry.tokens.access_token, entry.tokens.refresh_token]) };
}

describe("auth", () => {
  it("M8 E6 login prints the URL and takes the redirect on a loopback port; calls then run authorized, and no token reaches the output or the journal", async () => {
    const { ran, canaries } = await login();
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/authorized MCP provider "notes" for .*notes:read/);
    expect(statSync(path.join(temp.dir, ".openworker", "mcp-tokens.json")).mode & 0o777).toBe(0o600);

    const status = await runEntry(FIXTURE_HOST, ["auth", "status", "--json", ...globals()]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject([{ namespace: "notes", refreshable: true, scopes: expect.stringContaining("notes:read") }]);

    const journal = path.join(temp.dir, "journal", "journal.db");
    const call = await runEntry(FIXTURE_HOST, ["call", "notes.whoami", "--approve", "yes", "--json", "--journal", journal, ...globals()]);
    expect(call.code, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ outcome: "succeeded", modelText: "user-1 [notes:read notes:write]" });
    const sessions = JSON.parse((await runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal])).stdout) as { sessionId: string }[];
    const exported = await runEntry(FIXTURE_HOST, ["journal", "export", sessions[0]!.sessionId, "--journal", journal]);
    for (const canary of canaries) {
      for (const text of [ran.stdout, ran.stderr, status.stdout, call.stdout, call.stderr, exported.stdout]) expect(text).not.toContain(canary);
      for (const file of readdirSync(path.dirname(journal))) expect(readFileSync(path.join(path.dirname(journal), file), "latin1"), file).not.toContain(canary);
    }
    expect((await runEntry(FIXTURE_HOST, ["journal", "verify", "--journal", journal])).code).toBe(0);
    // M8: journal show says the call ran authorized, and under which scopes.
    const shown = await runEntry(FIXTURE_HOST, ["journal", "show", sessions[0]!.sessionId, "--journal", journal]);
    expect(shown.stdout).toContain("authorized scopes");
    expect(shown.stdout).toMatch(/notes\.whoami .*notes:read notes:write/);
    const shownJson = JSON.parse((await runEntry(FIXTURE_HOST, ["journal", "show", sessions[0]!.sessionId, "--json", "--journal", journal])).stdout) as {
      calls: { authorizedScopes?: string[] }[];
    };
    expect(shownJson.calls[0]!.authorizedScopes).toEqual(expect.arrayContaining(["notes:read", "notes:write"]));

    const logout = await runEntry(FIXTURE_HOST, ["auth", "logout", "notes", ...globals()]);
    expect(logout.stdout).toContain('forgot the authorization of MCP provider "notes"');
    const refused = await runEntry(FIXTURE_HOST, ["call", "notes.whoami", "--approve", "yes", "--journal", journal, ...globals()]);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain("MCP_AUTHORIZATION_REQUIRED");
    expect(refused.stdout + refused.stderr).toContain("auth login notes");
  });

  it("M8 login names a provider it cannot authorize: unknown, or one over stdio", async () => {
    const unknown = await runEntry(FIXTURE_HOST, ["auth", "login", "nowhere", ...globals()]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("CLI_AUTH_PROVIDER_UNKNOWN");
    expect(unknown.stderr).toContain('no MCP provider "nowhere" is registered');
    const stdio = await runEntry(FIXTURE_HOST, ["auth", "login", "local", ...globals()]);
    expect(stdio.stderr).toContain("OAuth applies to streamable-HTTP providers only");
  });

  it("M8 M9 E6 a scripted run against the OAuth-protected service: the call runs authorized, the provider asks mid-call, the terminal answers, and the journal shows both", async () => {
    const { ran: loggedIn, canaries } = await login();
    expect(loggedIn.code, loggedIn.stderr).toBe(0);
    const bundle = writeBundle(path.join(temp.dir, "archive-bundle"), JSON.stringify({ version: 3, tools: ["notes.archive"] }));
    const script = path.join(temp.dir, "archive-script.json");
    writeFileSync(script, JSON.stringify([{ text: "Archiving.", toolCalls: [{ name: "notes__archive", arguments: {} }] }, { text: "Archived." }]));
    const journal = path.join(temp.dir, "archive", "journal.db");
    // The prompt loop reads every answer from stdin: the turn, the approval, then the form (answer it, folder, keep).
    const run = await runEntry(FIXTURE_HOST, ["run", "--bundle", bundle, "--script", script, "--journal", journal, ...globals()], {
      input: "archive my old notes\ny\ny\nold\n3\n",
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("Which folder should be archived?");
    expect(run.stdout).toContain(String.raw`archive for user-1: accept {\"folder\":\"old\",\"keep\":3}`);
    const sessions = JSON.parse((await runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal])).stdout) as { sessionId: string }[];
    const sessionId = sessions[0]!.sessionId;
    const shown = await runEntry(FIXTURE_HOST, ["journal", "show", sessionId, "--journal", journal]);
    expect(shown.stdout).toMatch(/notes\.archive .*notes:read.* form: accept \(person terminal user\)/);
    const exported = await runEntry(FIXTURE_HOST, ["journal", "export", sessionId, "--journal", journal]);
    const records = exported.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string });
    expect(records.find((record) => record.kind === "call_elicitation_asked")).toMatchObject({
      provider: "notes",
      mode: "form",
      message: "Which folder should be archived?",
    });
    expect(records.find((record) => record.kind === "call_elicitation_answered")).toMatchObject({ action: "accept", by: "person", who: "terminal user" });
    expect((await runEntry(FIXTURE_HOST, ["journal", "verify", "--journal", journal])).code).toBe(0);
    for (const canary of canaries) {
      for (const text of [run.stdout, run.stderr, shown.stdout, exported.stdout]) expect(text).not.toContain(canary);
      for (const file of readdirSync(path.dirname(journal))) expect(readFileSync(path.join(path.dirname(journal), file), "latin1"), file).not.toContain(canary);
    }
  });
});
