import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HarnessClient, type HarnessElicitationRequest } from "@openworker/harness-client";
import { FIXTURE_HOST, REPO, runEntry, tempDir, writeBundle } from "./helpers.js";

// What an MCP provider asks the user mid-call, as the CLI's own hosts answer it: the
// terminal of `call`, and the host application behind `serve --stdio`. The provider is a
// real stdio MCP server (SDK 1.x) whose tools ask with `elicitInput`.
const temp = tempDir("elicitation");
afterAll(() => temp.cleanup());

const servers = path.join(temp.dir, "servers.json");
writeFileSync(
  servers,
  JSON.stringify({
    servers: { asker: { transport: "stdio", command: process.execPath, args: [path.join(REPO, "packages/mcp-bridge/test/fixtures/elicit-legacy.mjs")] } },
  }),
);
const bundle = writeBundle(path.join(temp.dir, "bundle"), JSON.stringify({ version: 3, tools: ["asker.ask", "asker.ask_url"] }));

interface ElicitationRecord {
  readonly kind: string;
  readonly action?: string;
  readonly by?: string;
  readonly who?: string;
  readonly reason?: string;
  readonly provider?: string;
  readonly mode?: string;
}

/** The elicitation records of every session in `journal`, oldest first. */
async function elicitationRecords(journal: string): Promise<ElicitationRecord[]> {
  const sessions = JSON.parse((await runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal])).stdout) as { sessionId: string }[];
  const records: ElicitationRecord[] = [];
  for (const { sessionId } of sessions) {
    const exported = await runEntry(FIXTURE_HOST, ["journal", "export", sessionId, "--journal", journal]);
    for (const line of exported.stdout.trim().split("\n")) {
      const record = JSON.parse(line) as ElicitationRecord;
      if (record.kind.startsWith("call_elicitation_")) records.push(record);
    }
  }
  return records;
}

describe("elicitation in the CLI's hosts", () => {
  it("M9 call without a terminal declines what the provider asks, journaled as the host's answer", async () => {
    const journal = path.join(temp.dir, "call.db");
    const ran = await runEntry(FIXTURE_HOST, [
      "call",
      "asker.ask",
      "--bundle",
      bundle,
      "--approve",
      "yes",
      "--json",
      "--servers",
      servers,
      "--journal",
      journal,
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ outcome: "succeeded", modelText: '{"action":"decline"}' });
    expect(await elicitationRecords(journal)).toMatchObject([
      { kind: "call_elicitation_asked", provider: "asker", mode: "form" },
      { kind: "call_elicitation_answered", action: "decline", by: "host", who: "cli", reason: "no terminal to ask" },
    ]);
    const shown = await runEntry(FIXTURE_HOST, ["journal", "show", JSON.parse(ran.stdout).sessionId, "--journal", journal]);
    expect(shown.stdout).toContain("asked the user");
    expect(shown.stdout).toContain("form: decline (host cli)");
  });

  it("M9 serve --stdio asks the host with elicitation.request; its answer reaches the tool, and one without an elicitor declines", async () => {
    const journal = path.join(temp.dir, "stdio.db");
    const asked: HarnessElicitationRequest[] = [];
    const harness = HarnessClient.spawn({
      entry: FIXTURE_HOST,
      args: ["--servers", servers, "--journal", journal],
      stderr: "ignore",
      onApproval: () => ({ approved: true, who: "test host" }),
      onElicitation: (request) => {
        asked.push(request);
        return request.mode === "url" ? { action: "accept", who: "ada" } : { action: "accept", content: { name: "Ada", age: 36 }, who: "ada" };
      },
    });
    try {
      const { sessionId } = await harness.openSession({ bundle });
      const form = await harness.call(sessionId, "asker.ask", {});
      expect(form).toMatchObject({ outcome: "succeeded", modelText: '{"action":"accept","content":{"name":"Ada","age":36}}' });
      const url = await harness.call(sessionId, "asker.ask_url", {});
      expect(url).toMatchObject({ outcome: "succeeded", modelText: '{"action":"accept"}' });
      expect(asked.map((request) => [request.qualifiedName, request.provider, request.mode])).toEqual([
        ["asker.ask", "asker", "form"],
        ["asker.ask_url", "asker", "url"],
      ]);
      expect(asked[0]!.requestedSchema).toMatchObject({ required: ["name"] });
      expect(asked[1]!.url).toBe("https://example.invalid/sign-in");
      // A form's values do not travel to the journal, only their digest.
      await harness.closeSession(sessionId);
    } finally {
      await harness.close();
    }
    const records = await elicitationRecords(journal);
    expect(records.filter((record) => record.kind === "call_elicitation_answered")).toMatchObject([
      { action: "accept", by: "person", who: "ada" },
      { action: "accept", by: "person", who: "ada" },
    ]);
    expect(JSON.stringify(records)).not.toContain("Ada");

    const silent = HarnessClient.spawn({ entry: FIXTURE_HOST, args: ["--servers", servers, "--journal", path.join(temp.dir, "silent.db")], stderr: "ignore" });
    try {
      const { sessionId } = await silent.openSession({ bundle, policy: { mode: "bypass" } });
      expect(await silent.call(sessionId, "asker.ask", {})).toMatchObject({ modelText: '{"action":"decline"}' });
    } finally {
      await silent.close();
    }
    expect((await elicitationRecords(path.join(temp.dir, "silent.db"))).at(-1)).toMatchObject({
      action: "decline",
      by: "host",
      reason: "the host has no elicitor",
    });
  });

  it("M9 serve --elicitation-timeout bounds the host's answer: a host that never answers is declined, and its request's signal aborts", async () => {
    const journal = path.join(temp.dir, "slow.db");
    let abandoned = false;
    const harness = HarnessClient.spawn({
      entry: FIXTURE_HOST,
      args: ["--servers", servers, "--journal", journal, "--elicitation-timeout", "1"],
      stderr: "ignore",
      onElicitation: (request) =>
        new Promise(() => {
          request.signal.addEventListener("abort", () => (abandoned = true));
        }),
    });
    try {
      const { sessionId } = await harness.openSession({ bundle, policy: { mode: "bypass" } });
      expect(await harness.call(sessionId, "asker.ask", {})).toMatchObject({ outcome: "succeeded", modelText: '{"action":"decline"}' });
    } finally {
      await harness.close();
    }
    expect(abandoned).toBe(true);
    expect((await elicitationRecords(journal)).at(-1)).toMatchObject({
      action: "decline",
      by: "runtime",
      reason: "the elicitor did not answer within 1000 ms",
    });
    const refused = await runEntry(FIXTURE_HOST, ["serve", "--stdio", "--elicitation-timeout", "0"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("--elicitation-timeout must be a whole number of seconds from 1 to 999999");
  });
});
