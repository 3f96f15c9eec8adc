import { spawn } from "node:child_process";
import path from "node:path";
import type { RuntimeEvent } from "@openworker/runtime";
import { afterAll, describe, expect, it, vi } from "vitest";
import { HarnessClient, type HarnessApprovalRequest } from "../src/index.js";
import { COWORKER, DEMO_SCRIPT, FIXTURE_HOST, HOST, tempDir, writeBundle } from "./helpers.js";

const temp = tempDir("stdio");
afterAll(() => temp.cleanup());

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
      expect(opened).toMatchObject({ sessionId: expect.stringMatching(/^ses_/), executionIdentity: expect.stringMatching(/^owid/), coworker: "Desk assistant" });

      const turn = await harness.runTurn(opened.sessionId, "Do the demo.");
      expect(turn.completed).toBe(true);
      expect(turn.calls.map((call) => [call.qualifiedName, call.outcome])).toEqual([
        ["example.web_search", "succeeded"],
        ["acer.acer_care_center_batterystatus_get", "succeeded"],
        ["notification.notify", "denied"],
      ]);
      expect(approvals.map((request) => request.qualifiedName)).toEqual(["example.web_search", "acer.acer_care_center_batterystatus_get", "notification.notify"]);
      expect(approvals[2]).toMatchObject({ kind: "native", classification: "external", args: { title: "OpenWorker demo" } });
      expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(["turn_started", "approval_needed", "call_started", "call_finished", "message", "turn_finished"]));

      const inventory = (await harness.mcpInventory(opened.sessionId)) as { tools: { serverName: string; toolName: string }[] };
      expect(inventory.tools).toEqual([expect.objectContaining({ serverName: "acer", toolName: "acer_care_center_batterystatus_get" })]);

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
    const bundle = writeBundle(path.join(temp.dir, "whoami"), JSON.stringify({ version: 3, tools: ["fixture.whoami"] }));
    const harness = HarnessClient.spawn({
      entry: FIXTURE_HOST,
      args: ["--journal", path.join(temp.dir, "journal.db")],
      stderr: "ignore",
      onApproval: () => ({ approved: true }),
    });
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
