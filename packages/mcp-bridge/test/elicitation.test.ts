import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpProviderDefinition } from "@openworker/registry";
import { McpBridge, type McpElicitationAnswer, type McpElicitationOutcome, type McpElicitationRequest, type McpSession } from "../src/index.js";
import { eventually, fixture } from "./helpers.js";

const SECRET = "s3cr3t-elicitation-key";
const scratch = mkdtempSync(path.join(tmpdir(), "mcp-elicit-"));
const elicitLog = path.join(scratch, "elicit.log");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const provider = (script: string): McpProviderDefinition => ({
  transport: "stdio",
  namespace: "asker",
  program: process.execPath,
  args: [fixture(script)],
  env: { SECRET, ELICIT_LOG: elicitLog },
});

/** The tool's text: what the server got back from its elicitation. */
const said = (result: { output?: { text?: string } }) => result.output?.text;

const eras = [
  { era: "2025-11-25 (SDK 1.32.2)", script: "elicit-legacy.mjs" },
  { era: "2026-07-28 (SDK 2.4.0)", script: "elicit-modern.mjs" },
];

for (const { era, script } of eras) {
  describe(`elicitation on ${era} over stdio`, () => {
    let bridge: McpBridge;
    let session: McpSession;
    beforeAll(async () => {
      bridge = new McpBridge([provider(script)], { closeGraceMs: 500, elicitation: true, elicitationTimeoutMs: 400 });
      session = bridge.openSession(`elicit-${script}`);
      expect((await session.discover(["asker"])).unavailable).toEqual([]);
    });
    afterAll(async () => {
      await session.close();
      await bridge.dispose();
      await bridge.joinCleanup();
    });

    const ask = (
      onElicitation?: (request: McpElicitationRequest) => Promise<McpElicitationAnswer>,
      options: { timeoutMs?: number; onElicitationAnswered?: (outcome: McpElicitationOutcome) => void } = {},
    ) => session.callTool("asker", "ask", {}, { ...options, ...(onElicitation ? { onElicitation } : {}) });

    it("M9 M6 accepted form content reaches the tool and shapes its result; the request names the provider, its schema, and no secret (E6)", async () => {
      const seen: McpElicitationRequest[] = [];
      const result = await ask(async (request) => {
        seen.push(request);
        return { action: "accept", content: { name: "Ada", age: 36 } };
      });
      expect(result.outcome).toBe("succeeded");
      expect(JSON.parse(said(result)!)).toEqual({ action: "accept", content: { name: "Ada", age: 36 } });
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ namespace: "asker", mode: "form", requestedSchema: { type: "object", required: ["name"] } });
      expect(seen[0]?.message).toContain("Your name?");
      expect(seen[0]?.message).not.toContain(SECRET);
      expect(seen[0]?.signal.aborted).toBe(false);
    });

    it("M9 M6 a decline and a cancel reach the tool as they were answered", async () => {
      expect(JSON.parse(said(await ask(async () => ({ action: "decline" })))!)).toEqual({ action: "decline" });
      expect(JSON.parse(said(await ask(async () => ({ action: "cancel" })))!)).toEqual({ action: "cancel" });
    });

    it("M9 M6 a call without onElicitation is declined (fail closed)", async () => {
      const result = await ask();
      expect(result.outcome).toBe("succeeded");
      expect(JSON.parse(said(result)!)).toEqual({ action: "decline" });
    });

    it("M9 M6 an elicitor that throws, answers malformed, or accepts content that is not flat or breaks the schema is declined", async () => {
      const answers: (() => Promise<unknown>)[] = [
        async () => {
          throw new Error(`the user typed ${SECRET}`);
        },
        async () => ({ action: "maybe" }),
        async () => "accept",
        async () => ({ action: "accept", content: { name: 7 } }),
        async () => ({ action: "accept", content: { age: 3 } }),
        async () => ({ action: "accept", content: { name: "Ada", address: { city: "London" } } }),
        async () => ({ action: "accept", content: { name: "Ada", age: Number.NaN } }),
      ];
      for (const answer of answers) {
        const result = await ask(answer as () => Promise<McpElicitationAnswer>);
        expect(result.outcome).toBe("succeeded");
        expect(JSON.parse(said(result)!)).toEqual({ action: "decline" });
        expect(JSON.stringify(result)).not.toContain(SECRET);
      }
    });

    it("M9 M6 an elicitor that outlasts elicitationTimeoutMs is declined, its signal aborts, and the outcome says why", async () => {
      let signal: AbortSignal | undefined;
      const outcomes: McpElicitationOutcome[] = [];
      const result = await ask(
        async (request) => {
          signal = request.signal;
          return new Promise<McpElicitationAnswer>(() => undefined);
        },
        { onElicitationAnswered: (outcome) => outcomes.push(outcome) },
      );
      expect(JSON.parse(said(result)!)).toEqual({ action: "decline" });
      expect(signal?.aborted).toBe(true);
      expect(outcomes).toHaveLength(1);
      expect(outcomes[0]).toMatchObject({ answer: { action: "decline" }, answeredBy: "bridge" });
      expect(outcomes[0]!.reason).toMatch(/did not answer within \d+ ms/);
    });

    it("M9 the outcome tells an elicitor's own answer from a malformed one the bridge declined", async () => {
      const outcomes: McpElicitationOutcome[] = [];
      const onElicitationAnswered = (outcome: McpElicitationOutcome) => outcomes.push(outcome);
      await ask(async () => ({ action: "decline" }), { onElicitationAnswered });
      await ask(async () => ({ action: "accept", content: { name: { nested: true } } }) as unknown as McpElicitationAnswer, { onElicitationAnswered });
      await ask(async () => ({ action: "accept", content: { name: "Ada" } }), { onElicitationAnswered });
      expect(outcomes.map((outcome) => [outcome.answer.action, outcome.answeredBy])).toEqual([
        ["decline", "elicitor"],
        ["decline", "bridge"],
        ["accept", "elicitor"],
      ]);
      expect(outcomes[1]!.reason).toMatch(/malformed/);
      expect(outcomes[2]!.request.mode).toBe("form");
    });

    it("M9 M10 the call's own bound still applies while the elicitor waits: the call times out", async () => {
      const result = await ask(() => new Promise<McpElicitationAnswer>(() => undefined), { timeoutMs: 200 });
      expect(result.outcome).toBe("timed_out");
      // The connection goes on.
      expect(JSON.parse(said(await ask(async () => ({ action: "decline" })))!)).toEqual({ action: "decline" });
    });

    it("M9 M6 a cancelled call declines its elicitation and settles cancelled", async () => {
      const controller = new AbortController();
      let signal: AbortSignal | undefined;
      const result = await session.callTool(
        "asker",
        "ask",
        {},
        {
          signal: controller.signal,
          onElicitation: async (request) => {
            signal = request.signal;
            setTimeout(() => controller.abort(), 20);
            return new Promise<McpElicitationAnswer>(() => undefined);
          },
        },
      );
      expect(result.outcome).toBe("cancelled");
      expect(signal?.aborted).toBe(true);
    });

    it("M9 M6 a URL-mode request reaches the elicitor with its URL; an accept goes back without content", async () => {
      const seen: McpElicitationRequest[] = [];
      const result = await session.callTool(
        "asker",
        "ask_url",
        {},
        {
          onElicitation: async (request) => {
            seen.push(request);
            return { action: "accept", content: { password: "not passed on" } };
          },
        },
      );
      expect(JSON.parse(said(result)!)).toEqual({ action: "accept" });
      expect(seen[0]).toMatchObject({ mode: "url", url: "https://example.invalid/sign-in", message: "Sign in" });
      expect(seen[0]?.requestedSchema).toBeUndefined();
    });

    it(
      script === "elicit-modern.mjs"
        ? "M9 M6 two calls in flight at once each reach their own elicitor (the round runs in its call's context)"
        : "M9 M6 with two calls in flight a 2025-era elicitation cannot be attributed to either, and is declined",
      async () => {
        const asked: string[] = [];
        const answerAs = (name: string) => async () => {
          asked.push(name);
          await new Promise((resolve) => setTimeout(resolve, 20));
          return { action: "accept" as const, content: { name } };
        };
        const [first, second] = await Promise.all([ask(answerAs("first")), ask(answerAs("second"))]);
        if (script === "elicit-modern.mjs") {
          expect(JSON.parse(said(first)!)).toEqual({ action: "accept", content: { name: "first" } });
          expect(JSON.parse(said(second)!)).toEqual({ action: "accept", content: { name: "second" } });
        } else {
          expect([JSON.parse(said(first)!), JSON.parse(said(second)!)]).toEqual([{ action: "decline" }, { action: "decline" }]);
          expect(asked).toEqual([]);
        }
      },
    );

    it("M9 M6 the client declares elicitation (form and URL) when the bridge is made with elicitation: true", async () => {
      expect(JSON.parse(said(await session.callTool("asker", "capabilities", {}, {}))!)).toEqual({ form: { applyDefaults: true }, url: {} });
    });
  });
}

describe("elicitation schema defaults", () => {
  it("M9 a field an accepted form leaves out is sent with the schema's default (applyDefaults); one the answer gives is kept", async () => {
    const bridge = new McpBridge([provider("elicit-legacy.mjs")], { closeGraceMs: 500, elicitation: true });
    const session = bridge.openSession("elicit-defaults");
    await session.discover(["asker"]);
    const empty = await session.callTool("asker", "ask_defaults", {}, { onElicitation: async () => ({ action: "accept" }) });
    expect(JSON.parse(said(empty)!)).toEqual({ action: "accept", content: { name: "Ada", tone: "warm" } });
    const given = await session.callTool("asker", "ask_defaults", {}, { onElicitation: async () => ({ action: "accept", content: { tone: "dry", n: 2 } }) });
    expect(JSON.parse(said(given)!)).toEqual({ action: "accept", content: { name: "Ada", tone: "dry", n: 2 } });
    await session.close();
    await bridge.dispose();
    await bridge.joinCleanup();
  });
});

describe("elicitation off, and outside a call", () => {
  it("M9 the elicitation options are checked when the bridge is made", () => {
    expect(() => new McpBridge([], { elicitation: "yes" as unknown as boolean })).toThrow(/McpBridgeOptions.elicitation must be true or false/);
    expect(() => new McpBridge([], { elicitationTimeoutMs: -1 })).toThrow(/McpBridgeOptions.elicitationTimeoutMs must be a finite number/);
  });

  for (const { era, script } of eras) {
    it(`M9 M6 with elicitation off (the default) no capability is declared on ${era}, and the server says so`, async () => {
      const bridge = new McpBridge([provider(script)], { closeGraceMs: 500 });
      const session = bridge.openSession(`no-elicit-${script}`);
      await session.discover(["asker"]);
      expect(said(await session.callTool("asker", "capabilities", {}, {}))).toBe("null");
      const asked = await session.callTool("asker", "ask", {}, { onElicitation: async () => ({ action: "accept", content: { name: "Ada" } }) });
      expect(JSON.stringify(asked)).not.toContain("Ada");
      await session.close();
      await bridge.dispose();
      await bridge.joinCleanup();
    });
  }

  it("M9 a 2025-era elicitation request with no call in flight is refused, and the server sees the error", async () => {
    const bridge = new McpBridge([provider("elicit-legacy.mjs")], { closeGraceMs: 500, elicitation: true });
    const session = bridge.openSession("elicit-later");
    await session.discover(["asker"]);
    let asked = false;
    const later = await session.callTool(
      "asker",
      "later",
      {},
      {
        onElicitation: async () => {
          asked = true;
          return { action: "accept", content: { name: "Ada" } };
        },
      },
    );
    expect(said(later)).toBe("asked later");
    const logged = await eventually(() => {
      try {
        return readFileSync(elicitLog, "utf8").trim() || undefined;
      } catch {
        return undefined;
      }
    });
    expect(logged).toMatch(/^error: .*no call of MCP provider "asker" is running/);
    expect(asked).toBe(false);
    await session.close();
    await bridge.dispose();
    await bridge.joinCleanup();
  });
});

describe("elicitation on 2026-07-28 over streamable HTTP", () => {
  let service: ChildProcess;
  let bridge: McpBridge;
  beforeAll(async () => {
    service = spawn(process.execPath, [fixture("elicit-modern.mjs")], { env: { ...process.env, HTTP: "1", SECRET }, stdio: ["ignore", "pipe", "inherit"] });
    const url = await new Promise<string>((resolve) => createInterface({ input: service.stdout! }).once("line", resolve));
    bridge = new McpBridge([{ transport: "streamable_http", namespace: "remote", url }], { elicitation: true, elicitationTimeoutMs: 400 });
  });
  afterAll(async () => {
    await bridge.dispose();
    await bridge.joinCleanup();
    service.kill();
  });

  it("M9 M6 accepted content reaches the tool, a call without an elicitor is declined, so is a slow one, and the call's bound holds", async () => {
    const session = bridge.openSession("elicit-http");
    expect((await session.discover(["remote"])).unavailable).toEqual([]);
    const accepted = await session.callTool("remote", "ask", {}, { onElicitation: async () => ({ action: "accept", content: { name: "Ada" } }) });
    expect(JSON.parse(said(accepted)!)).toEqual({ action: "accept", content: { name: "Ada" } });
    expect(JSON.parse(said(await session.callTool("remote", "ask", {}, {}))!)).toEqual({ action: "decline" });
    const never = () => new Promise<McpElicitationAnswer>(() => undefined);
    expect(JSON.parse(said(await session.callTool("remote", "ask", {}, { onElicitation: never }))!)).toEqual({ action: "decline" });
    expect((await session.callTool("remote", "ask", {}, { onElicitation: never, timeoutMs: 200 })).outcome).toBe("timed_out");
    await session.close();
  });
});
