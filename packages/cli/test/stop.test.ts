import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alive, collect, FIXTURE_HOST, HOST, runEntry, tempDir, waitForOutput, writeBundle } from "./helpers.js";

const temp = tempDir("stop");
afterAll(() => temp.cleanup());

const HANG = path.join(path.dirname(FIXTURE_HOST), "pid-then-hang.mjs");
const WAIT_BUNDLE = () => writeBundle(path.join(temp.dir, "wait"), JSON.stringify({ version: 3, tools: ["fixture.wait"] }));

async function until(predicate: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !predicate(); waited += 20) {
    if (waited > 15_000) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs the fixture host with `args` until its tool waits for cancellation, then sends it `signal`: how it ended. */
async function stopWhileWaiting(args: string[], signal: NodeJS.Signals): Promise<Awaited<ReturnType<typeof collect>>> {
  const child = spawn(process.execPath, [FIXTURE_HOST, ...args], { env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  const done = collect(child);
  await waitForOutput(child.stderr!, (text) => text.includes("waiting for cancellation"));
  child.kill(signal);
  return done;
}

function sessionsOf(journal: string) {
  return runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal]).then(
    (ran) => JSON.parse(ran.stdout) as { sessionId: string; closedAt: string | null }[],
  );
}

describe("stopping a command from outside (Ctrl-C, SIGTERM, a closed stdout)", () => {
  it("M4 Ctrl-C while tools check waits on a provider ends that provider (verified) and exits 130 with CLI_INTERRUPTED", async () => {
    const pidFile = path.join(temp.dir, "hang.pid");
    const servers = path.join(temp.dir, "servers.json");
    writeFileSync(servers, JSON.stringify({ servers: { hang: { transport: "stdio", command: process.execPath, args: [HANG, pidFile] } } }));
    const bundle = writeBundle(path.join(temp.dir, "hang"), JSON.stringify({ version: 3, tools: ["hang.anything"] }));
    const child = spawn(process.execPath, [FIXTURE_HOST, "tools", "check", "--bundle", bundle, "--servers", servers], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const done = collect(child);
    await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "", "the provider to start");
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(alive(pid)).toBe(true);
    child.kill("SIGINT");
    const result = await done;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/^error CLI_INTERRUPTED: cancelled by the user \(Ctrl-C\)\nhint: /m);
    expect(result.stdout).toBe("");
    expect(alive(pid)).toBe(false);
  });

  it("M2 SIGTERM while tools check discovers 10,000 tools of large schemas ends the command: CLI_INTERRUPTED, the provider ended", async () => {
    const catalog = path.resolve(import.meta.dirname, "../../mcp-bridge/test/fixtures/big-catalog.mjs");
    const servers = path.join(temp.dir, "big-servers.json");
    const env = { TOOL_COUNT: "10000", PAGE_SIZE: "1000", SCHEMA_PROPERTIES: "7", PAGE_DELAY_MS: "150" };
    writeFileSync(servers, JSON.stringify({ servers: { big: { transport: "stdio", command: process.execPath, args: [catalog], env } } }));
    const bundle = writeBundle(path.join(temp.dir, "big"), JSON.stringify({ version: 1, mcpServers: ["big"] }));
    const child = spawn(process.execPath, [FIXTURE_HOST, "tools", "check", "--bundle", bundle, "--servers", servers], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const done = collect(child);
    const provider = () =>
      execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
        .split("\n")
        .map((line) => line.trim().split(/\s+/))
        .find(([, parent, ...args]) => Number(parent) === child.pid && args.join(" ").includes("big-catalog.mjs"));
    await until(() => provider() !== undefined, "the provider to start");
    const pid = Number(provider()![0]);
    // Let the first pages arrive, so the signal lands while the catalog is being read.
    await new Promise((resolve) => setTimeout(resolve, 400));
    child.kill("SIGTERM");
    const result = await done;
    expect(result.code).toBe(143);
    expect(result.stderr).toMatch(/^error CLI_INTERRUPTED: stopped by SIGTERM\nhint: /m);
    expect(alive(pid)).toBe(false);
  });

  it("A3 SIGTERM during a call cancels it and closes the session: journaled as cancelled, chain closed and intact", async () => {
    const journal = path.join(temp.dir, "sigterm.db");
    const result = await stopWhileWaiting(["call", "fixture.wait", "--approve", "yes", "--journal", journal], "SIGTERM");
    expect(result.code).toBe(143);
    expect(result.stdout).toMatch(/cancelled/);
    const [session] = await sessionsOf(journal);
    expect(session?.closedAt).toEqual(expect.any(String));
    const show = await runEntry(FIXTURE_HOST, ["journal", "show", session!.sessionId, "--json", "--journal", journal]);
    expect(JSON.parse(show.stdout).calls[0]).toMatchObject({ qualifiedName: "fixture.wait", outcome: "cancelled" });
    expect((await runEntry(FIXTURE_HOST, ["journal", "verify", "--journal", journal])).code).toBe(0);
  });

  it.each([
    ["SIGTERM", "stopped by SIGTERM", 143],
    ["SIGINT", "cancelled by the user \\(Ctrl-C\\)", 130],
    ["SIGHUP", "stopped by SIGHUP", 129],
  ] as const)("A3 E4 call stopped by %s shows the cancelled call, then error CLI_INTERRUPTED (exit %i)", async (signal, why, code) => {
    const result = await stopWhileWaiting(["call", "fixture.wait", "--approve", "yes", "--journal", path.join(temp.dir, `call-${signal}.db`)], signal);
    expect(result.code).toBe(code);
    expect(result.stdout).toMatch(/cancelled/);
    expect(result.stderr).toMatch(new RegExp(`^error CLI_INTERRUPTED: ${why}\\nhint: `, "m"));
  });

  it.each([
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const)("A3 E4 run --message stopped by %s cancels its turn, then error CLI_INTERRUPTED (exit %i)", async (signal, code) => {
    const script = path.join(temp.dir, "wait-script.json");
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "fixture__wait", arguments: {} }] }, { text: "never reached" }]));
    const result = await stopWhileWaiting(
      ["run", "--bundle", WAIT_BUNDLE(), "--script", script, "--approve", "yes", "--message", "wait", "--journal", path.join(temp.dir, `run-${signal}.db`)],
      signal,
    );
    expect(result.code).toBe(code);
    expect(result.stdout).toMatch(/: cancelled/);
    expect(result.stderr).toMatch(new RegExp(`^error CLI_INTERRUPTED: stopped by ${signal}\\nhint: `, "m"));
  });

  it("A3 SIGTERM stops serve --mcp on stdio with a call in flight: exit 0, the session closed in the journal", async () => {
    const journal = path.join(temp.dir, "serve-mcp.db");
    const child = spawn(process.execPath, [FIXTURE_HOST, "serve", "--mcp", "--bundle", WAIT_BUNDLE(), "--approve", "yes", "--journal", journal], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const done = collect(child);
    const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
    });
    await waitForOutput(child.stdout!, (text) => text.includes('"id":1'));
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "fixture__wait", arguments: {} } });
    await until(() => existsSync(journal), "the journal");
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill("SIGTERM");
    const result = await done;
    expect(result.code).toBe(0);
    const sessions = await sessionsOf(journal);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.closedAt).toEqual(expect.any(String));
  });

  it("M4 SIGTERM while serve --mcp on stdio prepares its session ends the waiting provider (verified) and exits 0 without serving", async () => {
    const pidFile = path.join(temp.dir, "prepare-hang.pid");
    const servers = path.join(temp.dir, "prepare-servers.json");
    writeFileSync(servers, JSON.stringify({ servers: { hang: { transport: "stdio", command: process.execPath, args: [HANG, pidFile] } } }));
    const bundle = writeBundle(path.join(temp.dir, "prepare-hang"), JSON.stringify({ version: 3, tools: ["fixture.whoami", "hang.anything"] }));
    const journal = path.join(temp.dir, "serve-mcp-prepare.db");
    const child = spawn(
      process.execPath,
      [FIXTURE_HOST, "serve", "--mcp", "--bundle", bundle, "--servers", servers, "--approve", "yes", "--journal", journal],
      {
        env: { ...process.env, NO_COLOR: "1" },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    const done = collect(child);
    // The session's first preparation waits on the provider, which never answers `initialize`.
    await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "", "the provider to start");
    const pid = Number(readFileSync(pidFile, "utf8"));
    child.kill("SIGTERM");
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("serving");
    expect(alive(pid)).toBe(false);
    const sessions = await sessionsOf(journal);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.closedAt).toEqual(expect.any(String));
  });

  it("a stdout closed by its reader (cli | head) neither crashes the CLI nor leaves its session open", async () => {
    const journal = path.join(temp.dir, "epipe.db");
    const bundle = writeBundle(path.join(temp.dir, "whoami"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const script = path.join(temp.dir, "whoami.json");
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "fixture__whoami", arguments: {} }] }, { text: "done" }]));
    const child = spawn(
      process.execPath,
      [FIXTURE_HOST, "run", "--bundle", bundle, "--script", script, "--approve", "yes", "--session-id", "ses_epipe", "--message", "who", "--journal", journal],
      {
        env: { ...process.env, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child.stdout!.destroy();
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\(/);
    // 0 when the run finished before its first write, 141 (as SIGPIPE) when a write found the reader gone.
    expect([0, 141]).toContain(code);
    const [session] = await sessionsOf(journal);
    expect(session).toMatchObject({ sessionId: "ses_epipe", closedAt: expect.any(String) });
  });

  it("a listing piped into a reader that exits early ends quietly (no stack trace)", async () => {
    const child = spawn(process.execPath, [HOST, "tools", "list", "--json"], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.destroy();
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });
});

describe("journal commands on a long session stop when asked (A3 readers)", () => {
  // One session of 6,000 calls: about 24,000 export lines, 9 MB.
  const bigJournal = async (): Promise<string> => {
    const file = path.join(temp.dir, "big.db");
    if (existsSync(file)) return file;
    const { argumentsDigest, Journal } = await import("@openworker/journal");
    const journal = Journal.open({ path: file });
    journal.sessionOpened({ sessionId: "ses_big", executionIdentity: "owid3:test", identityInputs: { note: "test" }, workspace: "/work" });
    for (let index = 0; index < 6000; index += 1) {
      const callId = `ses_big.c${index}`;
      const args = { q: "x".repeat(100), index };
      journal.callRequested({
        sessionId: "ses_big",
        turnId: "t1",
        callId,
        alias: "demo__run",
        qualifiedName: "demo.run",
        args,
        argsDigest: argumentsDigest(args),
      });
      journal.approvalDecided({ sessionId: "ses_big", callId, decision: "approved", by: "bypass", scope: "once", key: "k" });
      await journal.callStarted({ sessionId: "ses_big", callId });
      journal.callFinished({ sessionId: "ses_big", callId, outcome: "succeeded", result: { ok: "y".repeat(100) } });
    }
    journal.sessionClosed({ sessionId: "ses_big" });
    journal.close();
    return file;
  };

  it("journal export into a reader that goes away (| head) stops at once: exit 141 (as SIGPIPE), CLI_INTERRUPTED, no stack trace", async () => {
    const journal = await bigJournal();
    const child = spawn(process.execPath, [FIXTURE_HOST, "journal", "export", "ses_big", "--journal", journal], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const first = await new Promise<string>((resolve) => child.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString())));
    expect(first.split("\n")[0]).toMatch(/^\{"at":/);
    child.stdout!.destroy();
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code).toBe(141);
    expect(stderr).toMatch(/^error CLI_INTERRUPTED: /m);
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\(/);
  });

  it("journal export waits for a slow reader instead of buffering the session, and Ctrl-C stops it", async () => {
    const journal = await bigJournal();
    const child = spawn(process.execPath, [FIXTURE_HOST, "journal", "export", "ses_big", "--journal", journal], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // Read nothing yet: the pipe fills, and the export must wait for its reader.
    child.stdout!.pause();
    // Ctrl-C only once the export has begun (its first bytes wait, unread, in the stream's
    // buffer): one sent while the host was still loading would meet Node's default action
    // (on a busy machine, loading took more than the 800 ms this test used to wait). Then
    // 800 ms more, time enough to write the whole session if nothing held it back.
    await until(() => child.stdout!.readableLength > 0, "the export's first bytes");
    await new Promise((resolve) => setTimeout(resolve, 800));
    child.kill("SIGINT");
    await until(() => /^error CLI_INTERRUPTED: /m.test(stderr), "the interruption");
    let received = 0;
    child.stdout!.on("data", (chunk: Buffer) => (received += chunk.length));
    child.stdout!.resume();
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code).toBe(130);
    // What was written before the stop: the pipe's buffer and a chunk or two, not the ~9 MB session.
    expect(received).toBeLessThan(1_000_000);
  });

  it("journal export to a reader that keeps up writes every line, exactly as the library exports them", async () => {
    const journal = await bigJournal();
    const ran = await runEntry(FIXTURE_HOST, ["journal", "export", "ses_big", "--journal", journal]);
    const lines = ran.stdout.trimEnd().split("\n");
    const { Journal } = await import("@openworker/journal");
    const reader = Journal.open({ path: journal, readonly: true });
    try {
      expect(lines).toEqual([...reader.exportSession("ses_big")]);
    } finally {
      reader.close();
    }
  });
});

describe("serve --stdio ends after the requests it took", () => {
  it("A3 a request followed by the end of stdin is answered before the runtime closes", async () => {
    const journal = path.join(temp.dir, "eof.db");
    const bundle = WAIT_BUNDLE();
    const request = { jsonrpc: "2.0", id: 4, method: "session.open", params: { bundle, sessionId: "ses_eof" } };
    const result = await runEntry(FIXTURE_HOST, ["serve", "--stdio", "--journal", journal], { input: `${JSON.stringify(request)}\n` });
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout.trim().split("\n")[0]!);
    expect(answer).toMatchObject({ id: 4, result: { sessionId: "ses_eof" } });
    const sessions = await sessionsOf(journal);
    expect(sessions).toEqual([expect.objectContaining({ sessionId: "ses_eof", closedAt: expect.any(String) })]);
  });

  it("requests after shutdown are refused with HARNESS_SHUTTING_DOWN; those before it are answered", async () => {
    const journal = path.join(temp.dir, "shutdown-order.db");
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "session.open", params: { bundle: WAIT_BUNDLE(), sessionId: "ses_before" } },
      { jsonrpc: "2.0", id: 2, method: "shutdown" },
      { jsonrpc: "2.0", id: 3, method: "models.list" },
    ];
    const result = await runEntry(FIXTURE_HOST, ["serve", "--stdio", "--journal", journal], {
      input: lines.map((line) => `${JSON.stringify(line)}\n`).join(""),
    });
    expect(result.code).toBe(0);
    const answers = new Map(
      result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { id: number })
        .map((answer) => [answer.id, answer]),
    );
    expect(answers.get(1)).toMatchObject({ result: { sessionId: "ses_before" } });
    expect(answers.get(2)).toMatchObject({ result: { shuttingDown: true } });
    expect(answers.get(3)).toMatchObject({ error: { data: { code: "HARNESS_SHUTTING_DOWN" } } });
  });
});
