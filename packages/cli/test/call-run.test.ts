import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collect, COWORKER, DEMO_POLICY, DEMO_SCRIPT, FIXTURE_HOST, runEntry, runHost, tempDir, waitForOutput, writeBundle } from "./helpers.js";

const temp = tempDir("run");
afterAll(() => temp.cleanup());
const journal = path.join(temp.dir, "journal.db");

describe("call", () => {
  it("E5 A3 calls a native tool through the pipeline, prints the result and journals it (exit 0)", async () => {
    const result = await runHost(["call", "example.web_search", "--args", '{"query":"model context protocol"}', "--approve", "yes", "--journal", journal]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('approved by policy "cli --approve yes"');
    expect(result.stdout).toContain('"source": "offline-index"');
  });

  it("E5 arguments that do not match the schema fail before approval (exit 1)", async () => {
    const result = await runHost(["call", "example.web_search", "--args", '{"q":1}', "--approve", "yes", "--json", "--journal", journal]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ outcome: "failed", code: "ARGUMENTS_INVALID" });
    expect(result.stderr).not.toContain("granted by --approve yes");
  });

  it("A1 a call the approver denies does not run (exit 1); without a terminal, ask fails closed", async () => {
    const denied = await runHost(["call", "example.web_search", "--args", '{"query":"x"}', "--approve", "no", "--json", "--journal", journal]);
    expect(denied.code).toBe(1);
    expect(JSON.parse(denied.stdout)).toMatchObject({ outcome: "denied", code: "APPROVAL_DENIED" });
    // A3: the denial is the call's terminal record; `journal show` says so rather than "-".
    const show = await runHost(["journal", "show", JSON.parse(denied.stdout).sessionId, "--journal", journal]);
    expect(show.stdout).toMatch(/example\.web_search\s+denied \(policy\)\s+denied\n/);
    const noTerminal = await runHost(["call", "example.web_search", "--args", '{"query":"x"}', "--json", "--journal", journal]);
    expect(noTerminal.code).toBe(1);
    expect(JSON.parse(noTerminal.stdout).message).toContain("no terminal to ask");
  });

  it("B2 call --bundle refuses a tool the bundle does not select; bad --args JSON is an error with a hint", async () => {
    const bundle = writeBundle(path.join(temp.dir, "only-search"), JSON.stringify({ version: 3, tools: ["example.web_search"] }));
    const unselected = await runHost(["call", "notification.notify", "--bundle", bundle, "--args", '{"title":"a","body":"b"}', "--journal", journal]);
    expect(unselected.code).toBe(1);
    expect(unselected.stderr).toMatch(/^error CLI_TOOL_NOT_SELECTED: .*notification\.notify/m);
    expect(unselected.stderr).toMatch(/^hint: /m);
    const badJson = await runHost(["call", "example.web_search", "--args", "{oops", "--journal", journal]);
    expect(badJson.code).toBe(1);
    expect(badJson.stderr).toMatch(/^error CLI_ARGUMENTS_INVALID: --args is not JSON/m);
  });
});

describe("run", () => {
  it("E4 A3 the calls of an answer that a fault stopped before are shown as not run, by qualified name, and are not journaled", async () => {
    const crashHost = path.join(path.dirname(FIXTURE_HOST), "crash-host.mjs");
    const bundle = writeBundle(path.join(temp.dir, "crash"), JSON.stringify({ version: 3, tools: ["fixture.crash", "fixture.whoami"] }));
    const script = path.join(temp.dir, "crash-script.json");
    writeFileSync(
      script,
      JSON.stringify([
        {
          toolCalls: [
            { name: "fixture__crash", arguments: {} },
            { name: "fixture__whoami", arguments: {} },
          ],
        },
        { text: "never reached" },
      ]),
    );
    const crashJournal = path.join(temp.dir, "crash.db");
    const result = await runEntry(crashHost, [
      "run",
      "--bundle",
      bundle,
      "--script",
      script,
      "--approve",
      "yes",
      "--session-id",
      "ses_crash",
      "--message",
      "go",
      "--journal",
      crashJournal,
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^call fixture\.crash \{\}\n {2}approved by .*\n {2}crashed TOOL_CRASHED: /m);
    expect(result.stdout).toMatch(/^call fixture\.whoami \{\}\n {2}not run: the turn stopped at an earlier call\n/m);
    expect(result.stdout).toContain("turn ses_crash.t1: fault, 1 call(s)");
    const show = await runEntry(crashHost, ["journal", "show", "ses_crash", "--json", "--journal", crashJournal]);
    expect(JSON.parse(show.stdout).calls.map((call: { qualifiedName: string; outcome: string }) => [call.qualifiedName, call.outcome])).toEqual([
      ["fixture.crash", "crashed"],
    ]);
  });

  it("A1 A3 runs one scripted turn: transcript, every call's approval and outcome; the journal verifies", async () => {
    const result = await runHost([
      "run",
      "--bundle",
      COWORKER,
      "--script",
      DEMO_SCRIPT,
      "--policy",
      DEMO_POLICY,
      "--approve",
      "yes",
      "--session-id",
      "ses_run_test",
      "--message",
      "Do the demo.",
      "--journal",
      journal,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("user: Do the demo.");
    expect(result.stdout).toMatch(/call example\.web_search .*\n {2}approved by policy "demo".*\n {2}succeeded: /);
    expect(result.stdout).toMatch(/call acer\.acer_care_center_batterystatus_get .*\n {2}approved by policy "demo".*\n {2}succeeded: /);
    expect(result.stdout).toMatch(/call notification\.notify .*\n {2}approved by policy "cli --approve yes"\n {2}(succeeded|failed NOTIFIER_UNAVAILABLE)/);
    expect(result.stdout).toContain("turn ses_run_test.t1: answered, 3 call(s)");

    const verify = await runHost(["journal", "verify", "ses_run_test", "--journal", journal]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^verified: session ses_run_test, \d+ record\(s\), every chain intact/);
    const show = await runHost(["journal", "show", "ses_run_test", "--json", "--journal", journal]);
    expect(JSON.parse(show.stdout).calls.map((call: { qualifiedName: string; decidedBy: string }) => [call.qualifiedName, call.decidedBy])).toEqual([
      ["example.web_search", "policy"],
      ["acer.acer_care_center_batterystatus_get", "policy"],
      // --approve yes is an automated stand-in for a person: journaled as a policy decision.
      ["notification.notify", "policy"],
    ]);
    const exported = await runHost(["journal", "export", "ses_run_test", "--journal", journal]);
    const records = exported.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records[0]).toMatchObject({ kind: "session_opened", sessionId: "ses_run_test", hash: expect.any(String) });
    expect(records.at(-1).kind).toBe("session_closed");
    const sessions = await runHost(["journal", "sessions", "--json", "--journal", journal]);
    expect(JSON.parse(sessions.stdout).map((session: { sessionId: string }) => session.sessionId)).toContain("ses_run_test");
  });

  it("journal show of an unknown session fails with its code and a hint (exit 1)", async () => {
    const result = await runHost(["journal", "show", "ses_nope", "--journal", journal]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_SESSION_UNKNOWN: .*ses_nope.*\nhint: .*journal sessions/);
  });

  it("run reads turns from stdin in the interactive loop until the input ends (exit 0)", async () => {
    const script = path.join(temp.dir, "two-turns.json");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(script, JSON.stringify([{ text: "first answer" }, { text: "second answer" }]));
    const result = await runHost(["run", "--bundle", COWORKER, "--script", script, "--journal", journal], { input: "hello\n\nagain\n" });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("assistant: first answer");
    expect(result.stdout).toContain("assistant: second answer");
    expect(result.stdout).toMatch(/\.t2: answered/);
  });

  it("run without a model is an error naming the options to pass", async () => {
    const result = await runHost(["run", "--bundle", COWORKER, "--message", "hi", "--journal", journal]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error CLI_MODEL_MISSING: .*\nhint: pass --script FILE .*--provider openai/);
  });

  it("A1 A3 an approval prompt whose stdin ends before an answer is a fail-closed denial by policy (who cli), not a person's", async () => {
    const bundle = writeBundle(path.join(temp.dir, "eof-prompt"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const script = path.join(temp.dir, "eof-prompt.json");
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "fixture__whoami", arguments: {} }] }, { text: "done" }]));
    const eofJournal = path.join(temp.dir, "eof-prompt.db");
    // The interactive loop reads "go" as a turn; the approval prompt then finds stdin at its end.
    const result = await runEntry(FIXTURE_HOST, ["run", "--bundle", bundle, "--script", script, "--session-id", "ses_eof", "--journal", eofJournal], {
      input: "go\n",
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("approve fixture.whoami");
    expect(result.stdout).toMatch(/call fixture\.whoami \{\}\n {2}denied by policy "cli"/);
    const exported = await runEntry(FIXTURE_HOST, ["journal", "export", "ses_eof", "--journal", eofJournal]);
    const decisions = exported.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((record) => record.kind === "approval_decided");
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ decision: "denied", by: "policy", who: "cli", reason: expect.stringContaining("stdin ended before an answer") });
  });

  it("E4 Ctrl-C cancels the running turn: the call ends cancelled, the turn stops, the journal records it", async () => {
    const bundle = writeBundle(path.join(temp.dir, "fixture"), JSON.stringify({ version: 3, tools: ["fixture.wait"] }));
    const script = path.join(temp.dir, "wait.json");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "fixture__wait", arguments: {} }] }, { text: "never reached" }]));
    const child = spawn(
      process.execPath,
      [
        FIXTURE_HOST,
        "run",
        "--bundle",
        bundle,
        "--script",
        script,
        "--approve",
        "yes",
        "--session-id",
        "ses_cancel",
        "--message",
        "wait",
        "--journal",
        journal,
      ],
      {
        env: { ...process.env, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const done = collect(child);
    await waitForOutput(child.stderr!, (text) => text.includes("waiting for cancellation"));
    child.kill("SIGINT");
    const result = await done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain("cancelling the turn");
    // The one turn was the command: it ends as a stopped command (README "Stopping").
    expect(result.stderr).toMatch(/^error CLI_INTERRUPTED: cancelled by the user \(Ctrl-C\)\nhint: /m);
    expect(result.stdout).toMatch(/call fixture\.wait .*\n.*\n {2}cancelled/);
    expect(result.stdout).toContain("turn ses_cancel.t1: cancelled");
    const show = await runEntry(FIXTURE_HOST, ["journal", "show", "ses_cancel", "--json", "--journal", journal]);
    expect(JSON.parse(show.stdout).calls[0]).toMatchObject({ qualifiedName: "fixture.wait", outcome: "cancelled" });
  });
});

describe("what opening the journal found (A3)", () => {
  it("A3 a command that opens a journal a crash left tells which calls were interrupted, and that none was run again", async () => {
    const journal = path.join(temp.dir, "crashed.db");
    // A writer killed with a call started: its lock and open call are left behind.
    const crash = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { argumentsDigest, Journal } = await import(${JSON.stringify(path.resolve(import.meta.dirname, "../../journal/dist/index.js"))});
         const journal = Journal.open({ path: ${JSON.stringify(journal)} });
         journal.sessionOpened({ sessionId: "ses_crash", executionIdentity: "owid3:test", identityInputs: { note: "test" }, workspace: "/work" });
         journal.callRequested({ sessionId: "ses_crash", turnId: "t1", callId: "ses_crash.c1", alias: "fixture__whoami", qualifiedName: "fixture.whoami", args: {}, argsDigest: argumentsDigest({}) });
         journal.approvalDecided({ sessionId: "ses_crash", callId: "ses_crash.c1", decision: "approved", by: "bypass", scope: "once", key: "k" });
         await journal.callStarted({ sessionId: "ses_crash", callId: "ses_crash.c1" });
         process.kill(process.pid, "SIGKILL");`,
      ],
      { encoding: "utf8" },
    );
    expect(crash.signal, crash.stderr).toBe("SIGKILL");
    const ran = await runEntry(FIXTURE_HOST, ["call", "fixture.whoami", "--approve", "yes", "--journal", journal]);
    expect(ran.code).toBe(0);
    expect(ran.stderr).toContain(
      "journal: call ses_crash.c1 (fixture.whoami) of session ses_crash was interrupted by a crash after it started; it is marked interrupted and was not run again",
    );
  });
});

describe("a journal whose SQLite binding does not load", () => {
  const NO_BINDING_HOST = path.join(path.dirname(FIXTURE_HOST), "no-binding-host.mjs");
  it.each(["missing", "mismatch"] as const)(
    "A3 better-sqlite3's binding %s: JOURNAL_OPEN_FAILED hints at rebuilding it, not at --journal PATH",
    async (how) => {
      const fresh = path.join(temp.dir, `no-binding-${how}.db`);
      const existing = path.join(temp.dir, `no-binding-${how}-existing.db`);
      writeFileSync(existing, "");
      // A writer (call) and a read-only journal command alike.
      for (const args of [
        ["call", "fixture.echo", "--approve", "yes", "--journal", fresh],
        ["journal", "sessions", "--journal", existing],
      ]) {
        const result = await runEntry(NO_BINDING_HOST, [how, ...args]);
        expect(result.code, args[0]).toBe(1);
        expect(result.stderr).toMatch(/^error JOURNAL_OPEN_FAILED: .*better-sqlite3's native binding/m);
        expect(result.stderr).toMatch(
          /^hint: the journal file is not at fault: better-sqlite3's native binding does not load in this Node\.js on this platform \(reinstall better-sqlite3, or build it from source .*`npm run build-release`\)/m,
        );
        expect(result.stderr).not.toContain("check --journal PATH");
      }
    },
  );
});

describe("remembered approvals (A1, A2)", () => {
  it("A2 journal approvals lists what a person remembered; revoke-approvals forgets it and the next session asks again", async () => {
    const { Runtime } = await import("@openworker/runtime");
    const { ToolRegistry } = await import("@openworker/registry");
    const { codeTool } = await import("@openworker/tools-sdk");
    const journal = path.join(temp.dir, "approvals.db");
    const bundle = writeBundle(path.join(temp.dir, "approvals-bundle"), JSON.stringify({ version: 3, tools: ["demo.pay"] }));
    const hostEntry = path.join(temp.dir, "approvals-host.js");
    writeFileSync(hostEntry, "// host\n");
    let asked = 0;
    const callOnce = async () => {
      const registry = new ToolRegistry();
      registry.register(codeTool("demo.pay", "Pays.", { type: "object" }, () => ({ ok: "paid" })));
      const runtime = await Runtime.openWithRegistry(registry, {
        workspace: temp.dir,
        journal: { path: journal },
        hostEntry,
        approver: () => (asked++, { approved: true, scope: "session" }),
      });
      try {
        const session = await runtime.openSession({ bundle });
        expect((await session.callTool("demo.pay", {})).outcome).toBe("succeeded");
      } finally {
        await runtime.close();
      }
    };
    await callOnce();
    await callOnce();
    expect(asked).toBe(1);
    const listed = await runEntry(FIXTURE_HOST, ["journal", "approvals", "--json", "--journal", journal]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ qualifiedName: "demo.pay", scope: "session", by: "person" })]);
    const usage = await runEntry(FIXTURE_HOST, ["journal", "revoke-approvals", "--journal", journal]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("needs --tool NAME, --identity ID or --all");
    const revoked = await runEntry(FIXTURE_HOST, ["journal", "revoke-approvals", "--tool", "demo.pay", "--journal", journal]);
    expect(revoked.stdout).toContain("forgot 1 remembered approval(s)");
    await callOnce();
    expect(asked).toBe(2);
  });
});
