import path from "node:path";
import type { JournalRecord } from "@openworker/journal";
import { ToolRegistry } from "@openworker/registry";
import { describe, expect, it } from "vitest";
import { Runtime, type ElicitationRequest, type Elicitor, type RuntimeOptions } from "../src/index.js";
import { scratchEach, writeBundle, writeHostEntry } from "./support/harness.js";

// Real stdio MCP servers whose tools ask the user mid-call: one of the 2025 era (SDK 1.x
// `elicitInput`), one that speaks only 2026-07-28 (an `input_required` round).
const fixtures = path.resolve(import.meta.dirname, "../../mcp-bridge/test/fixtures");
const SECRET = "elicit-secret-5521";
const ERAS = [
  ["2025-11-25", "elicit-legacy.mjs"],
  ["2026-07-28", "elicit-modern.mjs"],
] as const;

let runtime: Runtime | undefined;
const space = scratchEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

async function open(server: string, options: Partial<RuntimeOptions> = {}) {
  const registry = new ToolRegistry();
  registry.registerMcp({ namespace: "asker", program: process.execPath, args: [path.join(fixtures, server)], env: { SECRET } });
  runtime = await Runtime.openWithRegistry(registry, {
    workspace: space.dir,
    journal: { path: path.join(space.dir, "journal.db") },
    hostEntry: writeHostEntry(space.dir),
    ...options,
  });
  const session = await runtime.openSession({
    bundle: writeBundle(space.dir, ["asker.ask", "asker.ask_url", "asker.capabilities"]),
    policy: { mode: "bypass" },
  });
  return session;
}

const said = (report: { modelText: string }) => report.modelText;
const elicitations = (sessionId: string, callId: string) =>
  runtime!.journal.timeline({ sessionId, callId }).filter((record: JournalRecord) => record.kind.startsWith("call_elicitation_"));

describe.each(ERAS)("elicitation through the runtime, protocol %s", (_era, server) => {
  it("M9 E6 a form the host's elicitor accepts reaches the tool; the journal keeps the request, who answered and a digest of the values", async () => {
    const seen: ElicitationRequest[] = [];
    const session = await open(server, {
      elicitor: async (request) => {
        seen.push(request);
        return { action: "accept", content: { name: "Ada", age: 36 }, who: "ada@example.test" };
      },
    });
    const report = await session.callTool("asker.ask", {});
    expect(report.outcome).toBe("succeeded");
    expect(said(report)).toContain('"name":"Ada"');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ sessionId: session.id, callId: report.callId, qualifiedName: "asker.ask", provider: "asker", mode: "form" });
    expect(seen[0]!.requestedSchema).toMatchObject({ type: "object", required: ["name"] });
    expect(seen[0]!.message).not.toContain(SECRET);
    const [asked, answered] = elicitations(session.id, report.callId);
    expect(asked).toMatchObject({ kind: "call_elicitation_asked", elicitation: 1, provider: "asker", mode: "form" });
    expect((asked as { schemaDigest?: string }).schemaDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(answered).toMatchObject({ kind: "call_elicitation_answered", elicitation: 1, action: "accept", by: "person", who: "ada@example.test" });
    expect((answered as { contentDigest?: string }).contentDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The values themselves stay out of the elicitation records unless the host opts in (the
    // tool's own result may quote them); the secret stays out of everything.
    expect(JSON.stringify(elicitations(session.id, report.callId))).not.toContain("Ada");
    expect(JSON.stringify([...runtime!.journal.records(session.id)])).not.toContain(SECRET);
    expect(runtime!.journal.verify(session.id).ok).toBe(true);
    // An `input_required` round is no progress of the provider's: none is journaled for it.
    expect(runtime!.journal.timeline({ sessionId: session.id, callId: report.callId }).filter((record) => record.kind === "call_progress")).toEqual([]);
  });

  it("M9 a host that opts in keeps the accepted values in the journal, redacted", async () => {
    const session = await open(server, {
      journalElicitedContent: true,
      secrets: ["Lovelace"],
      elicitor: () => ({ action: "accept", content: { name: "Ada Lovelace" } }),
    });
    const report = await session.callTool("asker.ask", {});
    const answered = elicitations(session.id, report.callId)[1] as { content?: unknown };
    expect(answered.content).toEqual({ name: "Ada [redacted]" });
  });

  it("M9 an elicitor that throws, answers malformed or too late declines, journaled as the runtime's answer with why", async () => {
    const answers: Elicitor[] = [
      () => {
        throw new Error(`typed ${SECRET}`);
      },
      () => ({ action: "accept", content: { name: 42 } }) as never,
      (request) => new Promise((resolve) => request.signal.addEventListener("abort", () => resolve({ action: "accept", content: { name: "late" } }))),
    ];
    let next = 0;
    const session = await open(server, { elicitor: (request) => answers[next++]!(request), mcp: { elicitationTimeoutMs: 300 } });
    const reasons: string[] = [];
    for (let index = 0; index < answers.length; index += 1) {
      const report = await session.callTool("asker.ask", {});
      expect(said(report)).toContain('"action":"decline"');
      const answered = elicitations(session.id, report.callId)[1] as { action: string; by: string; reason: string };
      expect(answered).toMatchObject({ action: "decline", by: "runtime" });
      reasons.push(answered.reason);
    }
    expect(reasons[0]).toBe("the elicitor failed");
    expect(reasons[1]).toMatch(/malformed or did not match the requested schema/);
    expect(reasons[2]).toMatch(/did not answer within 300 ms/);
    expect(JSON.stringify([...runtime!.journal.records(session.id)])).not.toContain(SECRET);
  });

  it("M9 a URL-mode request reaches the elicitor with its URL; the journal keeps the URL without its query", async () => {
    const session = await open(server, { elicitor: () => ({ action: "accept", decidedBy: "host", who: "kiosk" }) });
    const report = await session.callTool("asker.ask_url", {});
    expect(said(report)).toContain('"action":"accept"');
    const [asked, answered] = elicitations(session.id, report.callId);
    expect(asked).toMatchObject({ mode: "url", url: "https://example.invalid/sign-in" });
    expect(answered).toMatchObject({ action: "accept", by: "host", who: "kiosk" });
    expect((answered as { contentDigest?: string }).contentDigest).toBeUndefined();
  });

  it("M9 a host call's own elicitor answers in place of the runtime's", async () => {
    const session = await open(server, { elicitor: () => ({ action: "decline" }) });
    const report = await session.callTool("asker.ask", {}, { onElicitation: () => ({ action: "accept", content: { name: "Grace" } }) });
    expect(said(report)).toContain('"name":"Grace"');
  });

  it("M9 without an elicitor the capability is not declared, and nothing is asked or journaled", async () => {
    const session = await open(server);
    const capabilities = await session.callTool("asker.capabilities", {});
    expect(said(capabilities)).toContain("null");
    const report = await session.callTool("asker.ask", {});
    expect(elicitations(session.id, report.callId)).toEqual([]);
  });
});

describe("elicitation options", () => {
  it("M9 an elicitor that is not a function is refused at open, naming the option", async () => {
    const registry = new ToolRegistry();
    await expect(
      Runtime.openWithRegistry(registry, { workspace: space.dir, journal: { path: path.join(space.dir, "journal.db") }, elicitor: "yes" as never }),
    ).rejects.toMatchObject({ code: "OPTIONS_INVALID", message: expect.stringContaining("elicitor must be a function") });
  });
});
