import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, FIXTURE_HOST, type Ran, REPO, runEntry, tempDir, waitForOutput, writeBundle } from "./helpers.js";

// `auth login|status|logout` against an OAuth-protected MCP service and a real
// authorization server (oidc-provider), both on 127.0.0.1, started by the test.
const temp = tempDir("auth");
const services: ChildProcess[] = [];
let servers: string;

/** Starts the service (its settings in `env`) and writes a servers.json naming it `notes`, in `dir`. */
async function startService(dir: string, env: Record<string, string> = {}): Promise<string> {
  const service = spawn(process.execPath, [path.join(REPO, "packages/mcp-bridge/test/fixtures/oauth-service.mjs")], {
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, ...env },
  });
  services.push(service);
  const { mcp } = JSON.parse(await new Promise<string>((resolve) => createInterface({ input: service.stdout! }).once("line", resolve))) as { mcp: string };
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "servers.json");
  writeFileSync(
    file,
    JSON.stringify({
      servers: { notes: { transport: "streamable_http", url: mcp }, local: { transport: "stdio", command: process.execPath, args: ["-e", ""] } },
    }),
  );
  return file;
}

beforeAll(async () => {
  servers = await startService(temp.dir);
});

afterAll(() => {
  for (const service of services) service.kill();
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

const globals = (file = servers) => ["--servers", file, "--workspace", path.dirname(file)];
const AUTHORIZATION_URL = /(https?:\/\/\S+\/auth\?\S+)/;

/** `auth login notes` as a user runs it: the printed URL opened, the redirect taken. */
async function login(file = servers): Promise<{ ran: Ran; canaries: string[] }> {
  const child = spawn(process.execPath, [FIXTURE_HOST, "auth", "login", "notes", ...globals(file)], { stdio: ["ignore", "pipe", "pipe"] });
  const done = collect(child);
  const said = await waitForOutput(child.stderr!, (text) => AUTHORIZATION_URL.test(text));
  await actAsUser(said.match(AUTHORIZATION_URL)![1]!);
  const ran = await done;
  const tokenFile = path.join(path.dirname(file), ".openworker", "mcp-tokens.json");
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

  it("M8 E6 a call refused for a scope its token lacks gets the authorization step at the terminal mid-call, then runs, and no token is shown", async () => {
    // The service's first challenge names notes:read only: the login's token cannot add notes.
    const file = await startService(path.join(temp.dir, "step-up"), { FIRST_SCOPE: "notes:read" });
    const { ran: loggedIn, canaries } = await login(file);
    expect(loggedIn.stdout).toMatch(/authorized MCP provider "notes" for notes:read\b(?! notes:write)/);
    const dir = path.dirname(file);
    const bundle = writeBundle(path.join(dir, "bundle"), JSON.stringify({ version: 3, tools: ["notes.add_note"] }));
    const script = path.join(dir, "script.json");
    writeFileSync(script, JSON.stringify([{ text: "Adding.", toolCalls: [{ name: "notes__add_note", arguments: { text: "buy milk" } }] }, { text: "Added." }]));
    const journal = path.join(dir, "journal.db");
    // The prompt loop: a person at the terminal answers the turn and the approval, then opens the URL the step prints.
    const run = spawn(process.execPath, [FIXTURE_HOST, "run", "--bundle", bundle, "--script", script, "--journal", journal, ...globals(file)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const done = collect(run);
    run.stdin.write("add a note\ny\n");
    const said = await waitForOutput(run.stderr!, (text) => text.includes("needs your authorization") && AUTHORIZATION_URL.test(text));
    await actAsUser(said.slice(said.indexOf("needs your authorization")).match(AUTHORIZATION_URL)![1]!);
    await waitForOutput(run.stdout!, (text) => text.includes("added: buy milk"));
    run.stdin.end();
    const ran = await done;
    expect(ran.code, ran.stderr).toBe(0);
    const status = JSON.parse((await runEntry(FIXTURE_HOST, ["auth", "status", "--json", ...globals(file)])).stdout) as { scopes: string }[];
    expect(status[0]!.scopes).toContain("notes:write");
    const tokens = JSON.parse(readFileSync(path.join(dir, ".openworker", "mcp-tokens.json"), "utf8")) as {
      entries: Record<string, { tokens: { access_token: string; refresh_token?: string } }>;
    };
    const all = [...canaries, ...Object.values(tokens.entries).flatMap((entry) => [entry.tokens.access_token, entry.tokens.refresh_token ?? "none"])];
    for (const canary of all) for (const text of [ran.stdout, ran.stderr]) expect(text).not.toContain(canary);
  });
});
