import { PassThrough } from "node:stream";
import { PostgresJournal } from "@openworker/journal-postgres";
import { startPostgres, type PostgresServer } from "@openworker/journal-postgres/testing";
import { ToolRegistry } from "@openworker/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_CODES, runCli } from "../src/index.js";

async function cli(argv: string[]) {
  const stdout = Object.assign(new PassThrough(), { isTTY: false });
  const stderr = Object.assign(new PassThrough(), { isTTY: false });
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await runCli(new ToolRegistry(), { argv, programName: "host", env: {}, stdout, stderr, stdin: new PassThrough() });
  return { code, stdout: out, stderr: err };
}

let server: PostgresServer;
let url: string;
beforeAll(async () => {
  server = await startPostgres();
  url = await server.database("cli");
  const journal = await PostgresJournal.open({ connectionString: url });
  journal.sessionOpened({ sessionId: "s1", executionIdentity: "owid3:cli", identityInputs: {}, workspace: "/w" });
  journal.callRequested({ sessionId: "s1", turnId: "t1", callId: "c1", alias: "demo__echo", qualifiedName: "demo.echo", args: { text: "hi" } });
  journal.approvalDecided({ sessionId: "s1", callId: "c1", decision: "approved", by: "person", scope: "session", key: "k" });
  await journal.callStarted({ sessionId: "s1", callId: "c1" });
  journal.callFinished({ sessionId: "s1", callId: "c1", outcome: "succeeded", result: { text: "hi" } });
  await journal.storeApproval(
    { executionIdentity: "owid3:cli", qualifiedName: "demo.echo", schemaFingerprint: "sha256:s" },
    { scope: "session", by: "person" },
  );
  await journal.close();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describe("journal commands on a PostgreSQL journal (--journal postgres://…)", () => {
  it("A3: sessions, show, export and verify read the PostgreSQL journal as they read a SQLite file", async () => {
    const sessions = await cli(["journal", "sessions", "--journal", url, "--json"]);
    expect(sessions.code, sessions.stderr).toBe(EXIT_CODES.ok);
    expect(JSON.parse(sessions.stdout)).toMatchObject([{ sessionId: "s1", calls: 1, openCalls: 0 }]);
    const show = await cli(["journal", "show", "s1", "--journal", url]);
    expect(show.stdout).toMatch(/c1\s+demo\.echo\s+approved \(person\)\s+succeeded/);
    const exported = await cli(["journal", "export", "s1", "--journal", url]);
    expect(
      exported.stdout
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { kind: string }).kind),
    ).toEqual(["session_opened", "call_requested", "approval_decided", "call_started", "call_finished"]);
    const verified = await cli(["journal", "verify", "--journal", url]);
    expect(verified.code).toBe(EXIT_CODES.ok);
    expect(verified.stdout).toContain("verified: 1 session(s), 5 record(s), every chain intact");
  });

  it("A2: approvals lists the shared approvals and revoke-approvals forgets them for every host", async () => {
    const listed = await cli(["journal", "approvals", "--journal", url, "--json"]);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ qualifiedName: "demo.echo", scope: "session" }]);
    const revoked = await cli(["journal", "revoke-approvals", "--all", "--journal", url]);
    expect(revoked.code, revoked.stderr).toBe(EXIT_CODES.ok);
    expect(revoked.stdout).toContain("forgot 1 remembered approval(s)");
  });

  it("errors: an unreachable server names it without its password; a session command refuses a postgres:// journal", async () => {
    const refused = await cli(["journal", "sessions", "--journal", "postgres://ana:hunter2@127.0.0.1:1/journal"]);
    expect(refused.code).toBe(EXIT_CODES.failed);
    expect(refused.stderr).toContain("JOURNAL_PG_CONNECT_FAILED");
    expect(refused.stderr).toContain("postgres://ana:***@127.0.0.1:1/journal");
    expect(refused.stderr).not.toContain("hunter2");
    const call = await cli(["call", "demo.echo", "--journal", url]);
    expect(call.code).toBe(EXIT_CODES.usage);
    expect(call.stderr).toContain("a session writes the embedded SQLite journal");
  });
});
