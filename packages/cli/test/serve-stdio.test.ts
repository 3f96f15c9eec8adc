import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ApprovalRequest, McpToolInventory, RuntimeEvent } from "@openworker/runtime";
import { afterAll, describe, expect, it, vi } from "vitest";
import { HARNESS_METHODS, HarnessClient, type HarnessApprovalRequest, type HarnessClientOptions } from "@openworker/harness-client";
import { COWORKER, DEMO_SCRIPT, FIXTURE_HOST, HOST, REPO, runEntry, tempDir, writeBundle } from "./helpers.js";

const temp = tempDir("stdio");
const ACER_LAUNCHER = path.join(REPO, "examples/acer-mcp/bin/acer-mcp-launcher");
const ACER_TOOL = "acer.acer_care_center_batterystatus_get";
afterAll(() => temp.cleanup());

/** A bundle selecting `fixture.whoami` and a harness of the fixture host with its own journal, both named after `name`. */
function whoamiHarness(name: string, onApproval: HarnessClientOptions["onApproval"]): { harness: HarnessClient; bundle: string } {
  const bundle = writeBundle(path.join(temp.dir, `whoami-${name}`), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
  const harness = HarnessClient.spawn({
    entry: FIXTURE_HOST,
    args: ["--journal", path.join(temp.dir, `${name}.db`)],
    stderr: "ignore",
    ...(onApproval ? { onApproval } : {}),
  });
  return { harness, bundle };
}

describe("serve --stdio (JSON-RPC harness driven by a test host over pipes)", () => {
  it("M4 shutdown ends the harness process even while the host keeps stdin open", async () => {
    const child = spawn(process.execPath, [HOST, "serve", "--stdio", "--journal", path.join(temp.dir, "shutdown.db")], { stdio: ["pipe", "pipe", "ignore"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "shutdown" })}\n`);
    const exit = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(-1);
      }, 15_000);
      child.on("exit", (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(exit).toBe(0);
    expect(output).toContain('"id":1');
  });

  it("A1 opens a session, runs a turn with events and an approval round trip to the host, and closes cleanly", async () => {
    const events: RuntimeEvent[] = [];
    const approvals: HarnessApprovalRequest[] = [];
    const harness = HarnessClient.spawn({
      entry: HOST,
      args: ["--journal", path.join(temp.dir, "journal.db"), "--script", DEMO_SCRIPT],
      stderr: "ignore",
      onEvent: (event) => events.push(event),
      onApproval: (request) => {
        approvals.push(request);
        return request.qualifiedName === "notification.notify" ? { approved: false, reason: "the test host says no" } : { approved: true, who: "test host" };
      },
    });
    try {
      const models = await harness.models();
      expect(models).toEqual([{ provider: "scripted", model: "scripted-1", nativeRuntime: "openworker" }]);
      expect(await harness.readiness("scripted", "scripted-1")).toEqual({ accountType: "scripted" });
      expect(await harness.readiness("scripted", "no-such-model")).toBeNull();
      const opened = await harness.openSession({ bundle: COWORKER, policy: { name: "ask-all", rules: { external: "ask" } } });
      expect(opened).toMatchObject({
        sessionId: expect.stringMatching(/^ses_/),
        executionIdentity: expect.stringMatching(/^owid/),
        coworker: "Desk assistant",
      });

      const turn = await harness.runTurn(opened.sessionId, "Do the demo.");
      expect(turn.completed).toBe(true);
      expect(turn.calls.map((call) => [call.qualifiedName, call.outcome])).toEqual([
        ["example.web_search", "succeeded"],
        ["acer.acer_care_center_batterystatus_get", "succeeded"],
        ["notification.notify", "denied"],
      ]);
      expect(approvals.map((request) => request.qualifiedName)).toEqual([
        "example.web_search",
        "acer.acer_care_center_batterystatus_get",
        "notification.notify",
      ]);
      expect(approvals[2]).toMatchObject({ kind: "native", classification: "external", args: { title: "OpenWorker demo" } });
      expect(events.map((event) => event.type)).toEqual(
        expect.arrayContaining(["turn_started", "approval_needed", "call_started", "call_finished", "message", "turn_finished"]),
      );

      const inventory = await harness.mcpInventory(opened.sessionId);
      expect(inventory?.tools).toEqual([expect.objectContaining({ serverName: "acer", toolName: "acer_care_center_batterystatus_get" })]);

      await expect(harness.request("no.such.method")).rejects.toMatchObject({ code: "METHOD_NOT_FOUND" });
      await expect(harness.runTurn("ses_unknown", "hi")).rejects.toMatchObject({ code: "SESSION_UNKNOWN" });
      expect(await harness.closeSession(opened.sessionId)).toEqual({ closed: true });
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });

  it("T5 turn.cancel with a turn id stops only that turn, and answers whether it stopped one", async () => {
    const events: RuntimeEvent[] = [];
    const harness = HarnessClient.spawn({
      entry: HOST,
      args: ["--journal", path.join(temp.dir, "cancel.db"), "--script", DEMO_SCRIPT],
      stderr: "ignore",
      onEvent: (event) => events.push(event),
      // The person never answers: the turn waits on its first approval until cancelled.
      onApproval: () => new Promise<never>(() => {}),
    });
    try {
      const opened = await harness.openSession({ bundle: COWORKER, policy: { name: "ask-all", rules: { external: "ask" } } });
      const running = harness.runTurn(opened.sessionId, "Do the demo.");
      await vi.waitFor(() => expect(events.some((event) => event.type === "approval_needed")).toBe(true), { timeout: 15_000 });
      const { turnId } = events.find((event) => event.type === "turn_started") as { turnId: string };
      expect(await harness.cancelTurn(opened.sessionId, `${turnId}-not-this-one`)).toEqual({ cancelled: false });
      expect(await harness.cancelTurn(opened.sessionId, turnId)).toEqual({ cancelled: true });
      expect(await running).toMatchObject({ completed: false, reason: "cancelled" });
      expect(await harness.cancelTurn(opened.sessionId)).toEqual({ cancelled: false });
      expect(await harness.closeSession(opened.sessionId)).toEqual({ closed: true });
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });

  it("re-exec: a native tool registered in the host's main is callable through the serve --stdio child", async () => {
    const { harness, bundle } = whoamiHarness("re-exec", () => ({ approved: true }));
    try {
      const { sessionId } = await harness.openSession({ bundle });
      const report = await harness.call(sessionId, "fixture.whoami");
      expect(report.outcome).toBe("succeeded");
      expect(report.json).toEqual({ pid: harness.child.pid, entry: FIXTURE_HOST });
      expect(harness.child.pid).not.toBe(process.pid);
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });
});

describe("what serve --help and the protocol page say of the protocol is what the wire carries", () => {
  /** `{a, b?: {c}, d?}` → top-level field names with their `?`: ["a", "b?", "d?"]. */
  const fieldsOf = (shape: string): string[] => {
    const inner = shape.replace(/\s+/g, " ").trim().slice(1, -1);
    const fields: string[] = [];
    let depth = 0;
    let current = "";
    for (const char of inner) {
      if (char === "{") depth++;
      if (char === "}") depth--;
      if (char === "," && depth === 0) {
        fields.push(current);
        current = "";
      } else current += char;
    }
    if (current.trim() !== "") fields.push(current);
    return fields.map((field) => field.trim().split(":")[0]!.trim());
  };
  const names = (fields: readonly string[]) => fields.map((field) => field.replace(/\?$/, "")).sort();

  it("serve --help gives every method's params as the protocol page's table does (turn.cancel {sessionId, reason?, turnId?} included)", async () => {
    const help = (await runEntry(FIXTURE_HOST, ["serve", "--help"])).stdout;
    const readme = readFileSync(path.join(REPO, "docs/serve-stdio-protocol.md"), "utf8");
    for (const method of HARNESS_METHODS) {
      const row = new RegExp(`^\\| \`${method.replace(".", "\\.")}\` \\| \`([^\`]*)\` \\|`, "m").exec(readme);
      expect(row, `protocol page row of ${method}`).not.toBeNull();
      expect(help.split("\n"), method).toContain(`  ${method} ${row![1]}`);
    }
    expect(help).toContain("  turn.cancel {sessionId, reason?, turnId?}");
  });

  it("A1 approval.request carries exactly the fields serve --help and the protocol page name (turnId too), and a CallReport its approval", async () => {
    const help = (await runEntry(FIXTURE_HOST, ["serve", "--help"])).stdout;
    const readme = readFileSync(path.join(REPO, "docs/serve-stdio-protocol.md"), "utf8");
    const helpShape = /^ {2}approval\.request (\{[^}]*\})$/m.exec(help)?.[1];
    const readmeShape = /request `approval\.request` `(\{[^}`]*\})`/.exec(readme)?.[1];
    expect(helpShape).toBeDefined();
    expect(fieldsOf(helpShape!)).toEqual(fieldsOf(readmeShape!));
    const reportShape = /A `CallReport` is `(\{[^`]*\})`/.exec(readme)?.[1];
    expect(reportShape).toBeDefined();

    const asked: Record<string, unknown>[] = [];
    const { harness, bundle } = whoamiHarness("shapes", ({ signal: _signal, ...request }) => {
      asked.push(request);
      return { approved: true, who: "test host" };
    });
    try {
      const { sessionId } = await harness.openSession({ bundle });
      const report = await harness.call(sessionId, "fixture.whoami");
      expect(asked).toHaveLength(1);
      expect(Object.keys(asked[0]!).sort()).toEqual(names(fieldsOf(helpShape!)));
      expect(report.approval).toMatchObject({ approved: true, by: "person", who: "test host", scope: "once" });
      const documented = fieldsOf(reportShape!);
      expect(names(documented)).toEqual(expect.arrayContaining(Object.keys(report).sort()));
      for (const required of documented.filter((field) => !field.endsWith("?"))) expect(Object.keys(report), required).toContain(required);
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });

  it('A1 a host approver\'s decidedBy: "policy" reaches the journal as a rule, not a person', async () => {
    const { harness, bundle } = whoamiHarness("rule", () => ({ approved: true, decidedBy: "policy", who: "host rule: whoami is harmless" }));
    try {
      const { sessionId } = await harness.openSession({ bundle });
      const report = await harness.call(sessionId, "fixture.whoami");
      expect(report.approval).toMatchObject({ approved: true, by: "policy", who: "host rule: whoami is harmless" });
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });

  it("a harness started without a model answers turn.run MODEL_PROVIDER_UNKNOWN naming the options that give it one; calls still work", async () => {
    const { harness, bundle } = whoamiHarness("no-model", () => ({ approved: true }));
    try {
      expect(await harness.models()).toEqual([]);
      const { sessionId } = await harness.openSession({ bundle });
      const refusal = await harness.runTurn(sessionId, "hi").then(
        () => undefined,
        (error: unknown) => error as { code: string; message: string },
      );
      expect(refusal?.code).toBe("MODEL_PROVIDER_UNKNOWN");
      expect(refusal?.message).toContain("serve --stdio --script FILE");
      expect(refusal?.message).toContain("serve --stdio --base-url URL --model NAME");
      expect(refusal?.message).toContain("HarnessClient.spawn({ args:");
      expect(refusal?.message).not.toContain("pass `models` to the runtime");
      expect((await harness.call(sessionId, "fixture.whoami")).outcome).toBe("succeeded");
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });
});

describe("serve --stdio checks param types", () => {
  it("I2 M5 a wrongly typed optional param is PARAMS_INVALID naming the field and the type, never ignored", async () => {
    const harness = HarnessClient.spawn({ entry: FIXTURE_HOST, args: ["--journal", path.join(temp.dir, "params.db")], stderr: "ignore" });
    const bundle = writeBundle(path.join(temp.dir, "whoami-params"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    try {
      const refused = async (method: string, params: Record<string, unknown>, message: string) => {
        await expect(harness.request(method, params)).rejects.toMatchObject({ code: "PARAMS_INVALID", message: expect.stringContaining(message) });
      };
      // Ignored, these would answer every session's connections, open a random session id, fall back to the default model or workspace.
      await refused("inventory.mcp", { sessionId: 7 }, "params.sessionId must be a non-empty string, got a number");
      await refused("session.open", { bundle, sessionId: 42 }, "params.sessionId must be a non-empty string, got a number");
      await refused("session.open", { bundle, model: "openai" }, "params.model must be an object {provider?: string, model?: string}");
      await refused("session.open", { bundle, model: { provider: 1 } }, "params.model.provider must be a non-empty string, got a number");
      await refused("session.open", { bundle, model: { name: "gpt" } }, 'params.model has unknown field(s) "name"');
      await refused("session.open", { bundle, workspace: ["/x"] }, "params.workspace must be a non-empty string, got an array");
      const { sessionId } = await harness.openSession({ bundle, sessionId: "ses_params" });
      expect(sessionId).toBe("ses_params");
      await refused("turn.cancel", { sessionId, turnId: 3 }, "params.turnId must be a non-empty string, got a number");
      await refused("turn.cancel", { sessionId, reason: false }, "params.reason must be a non-empty string, got a boolean");
      expect(await harness.mcpInventory(sessionId)).not.toBeUndefined();
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });
});

describe("serve --stdio inventory.mcp", () => {
  it("I2 M5 passes serverNames and sessionDeniedTools on to the runtime's inventory, and refuses unknown or wrongly typed fields", async () => {
    const servers = path.join(temp.dir, "acer-servers.json");
    writeFileSync(servers, JSON.stringify({ servers: { acer: { transport: "stdio", command: ACER_LAUNCHER } } }));
    const bundle = writeBundle(path.join(temp.dir, "acer-bundle"), JSON.stringify({ version: 3, tools: [ACER_TOOL] }));
    const harness = HarnessClient.spawn({
      entry: FIXTURE_HOST,
      args: ["--journal", path.join(temp.dir, "inventory.db"), "--servers", servers],
      stderr: "ignore",
    });
    try {
      const { sessionId } = await harness.openSession({ bundle, policy: { name: "bypass", mode: "bypass" } });
      expect(await harness.call(sessionId, ACER_TOOL)).toMatchObject({ outcome: "succeeded" });
      const whole = await harness.mcpInventory(sessionId);
      expect(whole?.tools.map((tool) => tool.toolName)).toEqual(["acer_care_center_batterystatus_get"]);

      // The bounded set of servers a control surface may represent: acer is not in it.
      expect(await harness.request("inventory.mcp", { sessionId, serverNames: ["other"] })).toBeNull();
      expect(Object.keys((await harness.mcpInventory({ sessionId, serverNames: ["acer"] }))?.servers ?? {})).toEqual(["acer"]);
      // A tool the session denied is kept apart, not listed as visible.
      const denied = (await harness.request("inventory.mcp", {
        sessionId,
        sessionDeniedTools: { acer: ["acer_care_center_batterystatus_get"] },
      })) as McpToolInventory | null;
      expect(denied?.tools).toEqual([]);
      expect(denied?.sessionDeniedTools?.map((tool) => [tool.serverName, tool.toolName, tool.deniedBySession])).toEqual([
        ["acer", "acer_care_center_batterystatus_get", true],
      ]);

      const refused = async (params: Record<string, unknown>, message: string) => {
        await expect(harness.request("inventory.mcp", params)).rejects.toMatchObject({ code: "PARAMS_INVALID", message: expect.stringContaining(message) });
      };
      await refused({ sessionId, serverName: ["acer"] }, 'unknown field(s) "serverName" (allowed: sessionId, serverNames, sessionDeniedTools)');
      await refused({ sessionId, serverNames: "acer" }, "params.serverNames must be an array of non-empty strings, got a string");
      await refused({ sessionId, serverNames: ["acer", 3] }, "params.serverNames[1] must be a non-empty string, got a number");
      await refused({ sessionId, sessionDeniedTools: ["acer"] }, "params.sessionDeniedTools must be an object");
      await refused(
        { sessionId, sessionDeniedTools: { acer: "all" } },
        'params.sessionDeniedTools["acer"] must be an array of non-empty strings, got a string',
      );
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });
});

describe("serve --stdio cancels host-driven calls", () => {
  const WAIT = () => writeBundle(path.join(temp.dir, "wait"), JSON.stringify({ version: 3, tools: ["fixture.wait"] }));
  const BYPASS = { name: "bypass", mode: "bypass" };

  /** Resolves once `count` calls reported progress (fixture.wait reports, then waits for its signal). */
  function waiting(events: RuntimeEvent[], count: number) {
    return vi.waitFor(() => expect(events.filter((event) => event.type === "call_progress")).toHaveLength(count), { timeout: 15_000 });
  }

  async function outcomes(journal: string, sessionId: string) {
    const ran = await runEntry(FIXTURE_HOST, ["journal", "show", sessionId, "--json", "--journal", journal]);
    return (JSON.parse(ran.stdout) as { calls: { outcome: string }[] }).calls.map((call) => call.outcome);
  }

  it("T7 E4 A3 SIGTERM cancels a host call in flight (journaled cancelled) instead of waiting for the tool to finish", async () => {
    const journal = path.join(temp.dir, "sigterm-call.db");
    const events: RuntimeEvent[] = [];
    const harness = HarnessClient.spawn({ entry: FIXTURE_HOST, args: ["--journal", journal], stderr: "ignore", onEvent: (event) => events.push(event) });
    const { sessionId } = await harness.openSession({ bundle: WAIT(), policy: BYPASS });
    const call = harness.call(sessionId, "fixture.wait");
    await waiting(events, 1);
    harness.child.kill("SIGTERM");
    expect(await call).toMatchObject({ qualifiedName: "fixture.wait", outcome: "cancelled" });
    expect(await harness.close()).toBe(0);
    expect(await outcomes(journal, sessionId)).toEqual(["cancelled"]);
  });

  it("T7 $/cancelRequest (a host call's aborted signal) and turn.cancel without a turn id cancel host calls", async () => {
    const journal = path.join(temp.dir, "cancel-call.db");
    const events: RuntimeEvent[] = [];
    const harness = HarnessClient.spawn({ entry: FIXTURE_HOST, args: ["--journal", journal], stderr: "ignore", onEvent: (event) => events.push(event) });
    try {
      const { sessionId } = await harness.openSession({ bundle: WAIT(), policy: BYPASS });
      const stop = new AbortController();
      const first = harness.call(sessionId, "fixture.wait", {}, { signal: stop.signal });
      await waiting(events, 1);
      stop.abort();
      await expect(first).rejects.toMatchObject({ code: "JSON_RPC_CANCELLED" });
      await vi.waitFor(() => expect(events.filter((event) => event.type === "call_finished")).toHaveLength(1), { timeout: 15_000 });

      const second = harness.call(sessionId, "fixture.wait");
      await waiting(events, 2);
      expect(await harness.cancelTurn(sessionId)).toEqual({ cancelled: true });
      expect(await second).toMatchObject({ outcome: "cancelled" });
      expect(await harness.cancelTurn(sessionId)).toEqual({ cancelled: false });
      expect(await outcomes(journal, sessionId)).toEqual(["cancelled", "cancelled"]);
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });

  it("T7 A3 a $/cancelRequest in the same read as its call cancels it: the tool never runs, journaled cancelled", async () => {
    const journal = path.join(temp.dir, "same-read.db");
    const bundle = writeBundle(path.join(temp.dir, "whoami-same-read"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const child = spawn(process.execPath, [FIXTURE_HOST, "serve", "--stdio", "--journal", journal], { stdio: ["pipe", "pipe", "ignore"] });
    type Answer = { id?: number; result?: { outcome?: string }; error?: { data?: { code?: string } } };
    const answers = new Map<number, Answer>();
    let buffered = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
        const message = JSON.parse(buffered.slice(0, newline)) as Answer;
        buffered = buffered.slice(newline + 1);
        if (typeof message.id === "number") answers.set(message.id, message);
      }
    });
    const line = (message: object) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;
    const answer = (id: number) => vi.waitFor(() => answers.get(id) ?? Promise.reject(new Error(`no answer ${id} yet`)), { timeout: 15_000 });
    child.stdin.write(line({ id: 1, method: "session.open", params: { bundle, policy: BYPASS, sessionId: "ses_same_read" } }));
    await answer(1);
    // A first call prepares the session, so the cancelled one is taken by the runtime and journaled.
    child.stdin.write(line({ id: 2, method: "call", params: { sessionId: "ses_same_read", name: "fixture.whoami" } }));
    expect((await answer(2)).result).toMatchObject({ outcome: "succeeded" });
    // One write: the call and its cancellation arrive in one read, before the call was handled.
    child.stdin.write(
      line({ id: 3, method: "call", params: { sessionId: "ses_same_read", name: "fixture.whoami" } }) + line({ method: "$/cancelRequest", params: { id: 3 } }),
    );
    expect((await answer(3)).result).toMatchObject({ outcome: "cancelled" });
    child.stdin.end();
    expect(await new Promise((resolve) => child.once("exit", resolve))).toBe(0);
    expect(await outcomes(journal, "ses_same_read")).toEqual(["succeeded", "cancelled"]);
  });

  it("T7 HarnessClient.call with a signal already aborted rejects JSON_RPC_CANCELLED at once and sends nothing", async () => {
    const journal = path.join(temp.dir, "pre-aborted.db");
    const bundle = writeBundle(path.join(temp.dir, "whoami-pre-aborted"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const sent: string[] = [];
    const harness = HarnessClient.spawn({ entry: FIXTURE_HOST, args: ["--journal", journal], stderr: "ignore" });
    // What the client writes to the harness, as written (a spy on the real pipe).
    const stdin = harness.child.stdin!;
    const write = stdin.write.bind(stdin) as (chunk: string, ...rest: unknown[]) => boolean;
    stdin.write = ((chunk: string, ...rest: unknown[]) => {
      sent.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof stdin.write;
    try {
      const { sessionId } = await harness.openSession({ bundle, policy: BYPASS });
      const stopped = new AbortController();
      stopped.abort();
      await expect(harness.call(sessionId, "fixture.whoami", {}, { signal: stopped.signal })).rejects.toMatchObject({ code: "JSON_RPC_CANCELLED" });
      expect(sent.filter((chunk) => chunk.includes('"method":"call"') || chunk.includes("$/cancelRequest"))).toEqual([]);
      expect(await harness.call(sessionId, "fixture.whoami")).toMatchObject({ outcome: "succeeded" });
      expect(await harness.closeSession(sessionId)).toEqual({ closed: true });
      expect(await outcomes(journal, sessionId)).toEqual(["succeeded"]);
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });
});

describe("HarnessClient tells the host's approver when an approval is abandoned", () => {
  const ASK = { name: "ask-all", rules: { external: "ask" } };

  /** A harness whose scripted model calls fixture.whoami, and an approver that never answers but records its signal. */
  function askingHarness(name: string) {
    const script = path.join(temp.dir, `${name}-script.json`);
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "fixture__whoami", arguments: {} }] }, { text: "done" }]));
    const asked: ApprovalRequest[] = [];
    const harness = HarnessClient.spawn({
      entry: FIXTURE_HOST,
      args: ["--journal", path.join(temp.dir, `${name}.db`), "--script", script],
      stderr: "ignore",
      onApproval: (request) => {
        asked.push(request);
        return new Promise<never>(() => {});
      },
    });
    const bundle = writeBundle(path.join(temp.dir, `${name}-bundle`), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    return { harness, asked, bundle };
  }

  it("A1 the approval's signal aborts when the harness abandons it ($/cancelRequest after turn.cancel)", async () => {
    const { harness, asked, bundle } = askingHarness("abandoned");
    try {
      const { sessionId } = await harness.openSession({ bundle, policy: ASK });
      const turn = harness.runTurn(sessionId, "who runs you?");
      await vi.waitFor(() => expect(asked).toHaveLength(1), { timeout: 15_000 });
      const { signal } = asked[0]!;
      expect(signal.aborted).toBe(false);
      expect(asked[0]).toMatchObject({ qualifiedName: "fixture.whoami", alias: "fixture__whoami", kind: "native" });
      expect(await harness.cancelTurn(sessionId)).toEqual({ cancelled: true });
      expect(await turn).toMatchObject({ completed: false, reason: "cancelled" });
      await vi.waitFor(() => expect(signal.aborted).toBe(true), { timeout: 15_000 });
    } finally {
      expect(await harness.close()).toBe(0);
    }
  });

  it("M4 the approval's signal aborts when the harness child goes away", async () => {
    const { harness, asked, bundle } = askingHarness("child-gone");
    const { sessionId } = await harness.openSession({ bundle, policy: ASK });
    const turn = harness.runTurn(sessionId, "who runs you?");
    await vi.waitFor(() => expect(asked).toHaveLength(1), { timeout: 15_000 });
    harness.child.kill("SIGKILL");
    await expect(turn).rejects.toMatchObject({ code: "JSON_RPC_CLOSED" });
    expect(asked[0]!.signal.aborted).toBe(true);
    await harness.close();
  });
});
