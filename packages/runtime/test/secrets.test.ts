import { canonicalJson, toolError } from "@openworker/tools-sdk";
import { describe, expect, it } from "vitest";
import type { Runtime, RuntimeEvent } from "../src/index.js";
import { Redactor } from "../src/secrets.js";
import { ScriptedProvider } from "../src/testing/index.js";
import { nativeTool, openRuntime, scratchEach, writeBundle } from "./support/harness.js";

describe("redaction (E6)", () => {
  it('E6 masks a secret inside keys and values, and keeps an own "__proto__" key a key', () => {
    const redactor = new Redactor(["s3cr3t-value-123"]);
    const args = JSON.parse('{"__proto__":{"token":"s3cr3t-value-123"},"s3cr3t-value-123":1,"plain":"x"}') as unknown;
    const clean = redactor.json(args);
    expect(canonicalJson(clean)).toBe('{"[redacted]":1,"__proto__":{"token":"[redacted]"},"plain":"x"}');
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
    expect(redactor.json({ untouched: "text" })).toEqual({ untouched: "text" });
  });
});

// Text that reaches the runtime from hooks, tool errors, approvers and images: each is
// written somewhere (events, reports, the journal, the model's conversation), so each is
// redacted with the session's secrets.
describe("redaction of what hooks, approvers and tools hand the runtime (E6)", () => {
  const secret = "sk-live-0123456789abcdef";
  let runtime: Runtime | undefined;
  const space = scratchEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  async function journalText(sessionId: string): Promise<string> {
    await runtime!.journal.flush();
    return [...runtime!.journal.exportSession(sessionId)].join("\n");
  }

  it("E6 L1 a modelContext hook's error is redacted in the MODEL_CONTEXT_SKIPPED diagnostic", async () => {
    const failing = nativeTool("test.ctx", async () => ({ json: "ok" }), {
      modelContext: () => {
        throw new Error(`auth failed for key ${secret}`);
      },
    });
    const model = new ScriptedProvider([{ text: "done" }]);
    runtime = await openRuntime(space.dir, [failing], { models: [model], secrets: [secret] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.ctx"]), policy: { mode: "bypass" } });
    const events: RuntimeEvent[] = [];
    session.subscribe((event) => events.push(event));
    await session.runTurn("go");
    const diagnostic = events.find((event) => event.type === "diagnostic" && event.code === "MODEL_CONTEXT_SKIPPED");
    expect(diagnostic).toMatchObject({ message: expect.stringContaining("auth failed for key [redacted]") });
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it("E6 L1 facts holding a secret reach the model masked, as a tool result would", async () => {
    const leaky = nativeTool("test.ctx", async () => ({ json: "ok" }), { modelContext: () => ({ status: `signed in with ${secret}`, [secret]: 1 }) });
    const model = new ScriptedProvider([{ text: "done" }]);
    runtime = await openRuntime(space.dir, [leaky], { models: [model], secrets: [secret], modelContextBudgetMs: 1000 });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.ctx"]), policy: { mode: "bypass" } });
    await session.runTurn("go");
    expect(model.requests[0]!.facts).toEqual({ test__ctx: { status: "signed in with [redacted]", "[redacted]": 1 } });
  });

  it("E6 a ToolError code holding a secret is replaced whole by CODE_REDACTED in the report, the event, the journal and the model's message", async () => {
    const leaky = nativeTool("test.code", async () => toolError(secret, "refused"));
    const partly = nativeTool("test.partly", async () => toolError(`ERR_${secret}`, "refused too"));
    const honest = nativeTool("test.honest", async () => toolError("NOT_TODAY", "try tomorrow"));
    const calls = ["test__code", "test__partly", "test__honest"].map((name) => ({ name, arguments: "{}" }));
    const model = new ScriptedProvider([{ toolCalls: calls }, { text: "done" }]);
    runtime = await openRuntime(space.dir, [leaky, partly, honest], { models: [model], secrets: [secret] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.code", "test.partly", "test.honest"]), policy: { mode: "bypass" } });
    const events: RuntimeEvent[] = [];
    session.subscribe((event) => events.push(event));
    const turn = await session.runTurn("go");
    expect(turn.calls.map((call) => call.code)).toEqual(["CODE_REDACTED", "CODE_REDACTED", "NOT_TODAY"]);
    expect(turn.calls[0]!.modelText).toBe("Error CODE_REDACTED: refused");
    expect(events.filter((event) => event.type === "call_finished").map((event) => (event.type === "call_finished" ? event.code : undefined))).toEqual([
      "CODE_REDACTED",
      "CODE_REDACTED",
      "NOT_TODAY",
    ]);
    expect(runtime.journal.calls(session.id).map((call) => call.outcome)).toEqual(["failed", "failed", "failed"]);
    const journaled = await journalText(session.id);
    expect(journaled).toContain('"code":"CODE_REDACTED"');
    expect(journaled).toContain('"code":"NOT_TODAY"');
    for (const text of [JSON.stringify(turn), JSON.stringify(events), journaled, JSON.stringify(model.requests[1]!.messages)])
      expect(text).not.toContain(secret);
  });

  it("E6 A3 the approver's `who` is redacted in the report, in approval_decided and in a remembered approval", async () => {
    const echoed = nativeTool("test.echoed", async () => ({ json: "ok" }));
    runtime = await openRuntime(space.dir, [echoed], {
      secrets: [secret],
      approver: () => ({ approved: true, who: `ana (token ${secret})`, scope: "session" }),
    });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echoed"]) });
    const asked = await session.callTool("test.echoed", {});
    const remembered = await session.callTool("test.echoed", {});
    expect(asked.approval).toMatchObject({ approved: true, by: "person", who: "ana (token [redacted])" });
    expect(remembered.approval).toMatchObject({ approved: true, who: "ana (token [redacted])", reason: expect.stringContaining("remembered") });
    const journaled = await journalText(session.id);
    expect(journaled).toContain("ana (token [redacted])");
    expect(journaled).not.toContain(secret);
  });

  it("E6 T4 an image's description is redacted: in the IMAGE_WITHHELD event, the tool message that says so, and with a delivered image", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const camera = nativeTool("test.camera", async () => ({
      json: "captured",
      images: [
        { mimeType: "image/png", data: png, description: `screenshot of ${secret}`, recheckConsent: () => false },
        { mimeType: "image/png", data: png, description: `window showing ${secret}`, recheckConsent: () => true },
      ],
    }));
    const model = new ScriptedProvider([{ toolCalls: [{ name: "test__camera", arguments: "{}" }] }, { text: "seen" }]);
    runtime = await openRuntime(space.dir, [camera], { models: [model], secrets: [secret] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.camera"]), policy: { mode: "bypass" } });
    const events: RuntimeEvent[] = [];
    session.subscribe((event) => events.push(event));
    await session.runTurn("look");
    const withheld = events.find((event) => event.type === "diagnostic" && event.code === "IMAGE_WITHHELD");
    expect(withheld).toMatchObject({ message: expect.stringContaining("(screenshot of [redacted])") });
    const toolMessage = model.requests[1]!.messages.find((message) => message.role === "tool");
    expect(toolMessage).toMatchObject({
      content: expect.stringContaining("(screenshot of [redacted])"),
      images: [{ description: "window showing [redacted]" }],
    });
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(
      JSON.stringify(
        model.requests[1]!.messages.map((message) =>
          message.role === "tool" ? { ...message, images: message.images.map((image) => image.description) } : message,
        ),
      ),
    ).not.toContain(secret);
  });
});

describe("credentials the runtime recognizes without being told (E6)", () => {
  const password = "pw-Hunter2-s3cret";
  let runtime: Runtime | undefined;
  const space = scratchEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it("E6 a URL's password in a native tool's result, progress and error is redacted from the report, events, the model's messages and the journal", async () => {
    const url = `postgres://app:${password}@db.internal:5432/app`;
    const leaky = nativeTool("test.env", async (context) => {
      context.progress.report({ message: `connecting to ${url}` });
      return { json: { env: [`DATABASE_URL=${url}`] } };
    });
    const failing = nativeTool("test.fails", async () => toolError("DB_DOWN", `cannot reach ${url}`));
    const model = new ScriptedProvider([
      {
        toolCalls: [
          { name: "test__env", arguments: "{}" },
          { name: "test__fails", arguments: "{}" },
        ],
      },
      { text: `it said ${url}` },
    ]);
    runtime = await openRuntime(space.dir, [leaky, failing], { models: [model] });
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.env", "test.fails"]), policy: { mode: "bypass" } });
    const events: RuntimeEvent[] = [];
    session.subscribe((event) => events.push(event));
    const turn = await session.runTurn("go");
    expect(turn.calls[0]!.json).toEqual({ env: ["DATABASE_URL=postgres://app:[redacted]@db.internal:5432/app"] });
    expect(turn.calls[1]!.message).toBe("cannot reach postgres://app:[redacted]@db.internal:5432/app");
    expect(turn.text).toBe("it said postgres://app:[redacted]@db.internal:5432/app");
    await runtime.journal.flush();
    const journaled = [...runtime.journal.exportSession(session.id)].join("\n");
    expect(journaled).toContain("postgres://app:[redacted]@db.internal");
    for (const text of [JSON.stringify(turn), JSON.stringify(events), journaled, JSON.stringify(model.requests[1]!.messages), JSON.stringify(session.messages)])
      expect(text).not.toContain(password);
  });

  it("E6 a known secret of 4 to 7 characters is redacted; a secret-named environment value that short is not (it would mask words)", () => {
    const redactor = Redactor.fromSources(
      [{ transport: "stdio", namespace: "s", program: "srv", args: [], env: { S_KEY: "k7-abcd" } }],
      { APP_AUTH: "true", APP_TOKEN: "tok-long-enough" },
      ["h0st"],
    );
    expect(redactor.text("k7-abcd h0st true tok-long-enough")).toBe("[redacted] [redacted] true [redacted]");
  });
});
