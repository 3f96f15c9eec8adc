import { writeFileSync } from "node:fs";
import path from "node:path";
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURE_HOST, REPO, runEntry, sessionsOf, tempDir, withHttpServer, writeBundle } from "./helpers.js";

const temp = tempDir("mcp-elicitation");
afterAll(() => temp.cleanup());

const INFO = { name: "test-client", version: "1.0.0" };
const SECRET = "s3cret-elicitation-key-4711";
const PROVIDERS = path.join(REPO, "packages/mcp-bridge/test/fixtures");

/** Providers that ask mid-call: `legacy` speaks 2025-11-25 (elicitInput), `modern` 2026-07-28 (input_required). */
function servedArgs(journal: string): string[] {
  const servers = path.join(temp.dir, "servers.json");
  const provider = (file: string) => ({ transport: "stdio", command: process.execPath, args: [path.join(PROVIDERS, file)], env: { SECRET } });
  writeFileSync(servers, JSON.stringify({ servers: { legacy: provider("elicit-legacy.mjs"), modern: provider("elicit-modern.mjs") } }));
  const bundle = writeBundle(path.join(temp.dir, "bundle"), JSON.stringify({ version: 1, mcpServers: ["legacy", "modern"] }));
  return ["--bundle", bundle, "--servers", servers, "--approve", "yes", "--journal", journal];
}

type Era = "2025-11-25" | "2026-07-28";
type Declared = "form and url" | "form" | "nothing";
type ToolResult = { isError?: boolean; content: { type: string; text?: string }[] };
const CAPABILITIES: Record<Declared, ClientCapabilities> = {
  "form and url": { elicitation: { form: {}, url: {} } },
  form: { elicitation: { form: {} } },
  nothing: {},
};

/** An SDK client of `era` that declares `declared` of elicitation, and answers every form with Ada, 36. */
function clientOf(era: Era, declared: Declared) {
  const client = new Client(INFO, {
    capabilities: CAPABILITIES[declared],
    ...(era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" as const } } } : {}),
  });
  const asked: { mode?: string; message: string; url?: string; requestedSchema?: unknown }[] = [];
  if (declared !== "nothing") {
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params as (typeof asked)[number]);
      return request.params.mode === "url" ? { action: "accept" } : { action: "accept", content: { name: "Ada", age: 36 } };
    });
  }
  return { client, asked };
}

async function call(client: Client, name: string): Promise<string> {
  const result = (await client.callTool({ name, arguments: {} })) as ToolResult;
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  return result.content.map((block) => block.text ?? "").join("");
}

/** What a declared client, an undeclared one and a form-only one see, on one connection each. */
async function exercise(connect: (client: Client) => Promise<void>, era: Era): Promise<void> {
  const declared = clientOf(era, "form and url");
  await connect(declared.client);
  try {
    expect(declared.client.getNegotiatedProtocolVersion()).toBe(era);
    // Each provider's answer reaches its tool as the client gave it, from either provider era.
    expect(JSON.parse(await call(declared.client, "legacy__ask"))).toEqual({ action: "accept", content: { name: "Ada", age: 36 } });
    expect(JSON.parse(await call(declared.client, "modern__ask"))).toEqual({ action: "accept", content: { name: "Ada", age: 36 } });
    expect(JSON.parse(await call(declared.client, "legacy__ask_url"))).toEqual({ action: "accept" });
    expect(declared.asked.map((asked) => asked.mode ?? "form")).toEqual(["form", "form", "url"]);
    // The provider's message reaches the client without the secret it was configured with (E6).
    expect(declared.asked[0]!.message).toMatch(/^Your name\? \(key /);
    expect(JSON.stringify(declared.asked)).not.toContain(SECRET);
    expect(declared.asked[0]!.requestedSchema).toMatchObject({ properties: { name: { type: "string" }, age: { type: "number" } }, required: ["name"] });
    expect(declared.asked[2]!.url).toBe("https://example.invalid/sign-in");
  } finally {
    await declared.client.close();
  }
  const undeclared = clientOf(era, "nothing");
  await connect(undeclared.client);
  try {
    expect(JSON.parse(await call(undeclared.client, "legacy__ask"))).toEqual({ action: "decline" });
    expect(await call(undeclared.client, "modern__ask")).toBe(JSON.stringify({ action: "decline" }));
  } finally {
    await undeclared.client.close();
  }
  const formOnly = clientOf(era, "form");
  await connect(formOnly.client);
  try {
    expect(JSON.parse(await call(formOnly.client, "legacy__ask_url"))).toEqual({ action: "decline" });
    expect(formOnly.asked).toEqual([]);
  } finally {
    await formOnly.client.close();
  }
}

interface JournalRecord {
  readonly kind: string;
  readonly callId?: string;
  readonly elicitation?: number;
  readonly mode?: string;
  readonly message?: string;
  readonly action?: string;
  readonly by?: string;
  readonly who?: string;
  readonly reason?: string;
  readonly contentDigest?: string;
  readonly content?: unknown;
}

/** Every record of every session of the journal, as `journal export` writes them. */
async function journalRecords(journal: string): Promise<JournalRecord[]> {
  const records: JournalRecord[] = [];
  for (const { sessionId } of await sessionsOf(journal)) {
    const exported = await runEntry(FIXTURE_HOST, ["journal", "export", sessionId, "--journal", journal]);
    expect(exported.code, exported.stderr).toBe(0);
    for (const line of exported.stdout.split("\n")) if (line.trim() !== "") records.push(JSON.parse(line) as JournalRecord);
  }
  return records;
}

/** The journal's elicitations in order: how each was asked and answered. */
function elicitations(records: readonly JournalRecord[]) {
  return records
    .filter((record) => record.kind === "call_elicitation_answered")
    .map((answered) => {
      const asked = records.find(
        (record) => record.kind === "call_elicitation_asked" && record.callId === answered.callId && record.elicitation === answered.elicitation,
      );
      return {
        mode: asked?.mode,
        action: answered.action,
        by: answered.by,
        who: answered.who,
        reason: answered.reason,
        digest: answered.contentDigest !== undefined,
      };
    });
}

/** What the journal holds of {@link exercise}, whichever transport and era: asked and answered, by whom. */
function expectJournaled(records: readonly JournalRecord[]): void {
  const person = { by: "person", who: "MCP client test-client" };
  const unasked = { action: "decline", by: "host", who: "serve --mcp" };
  expect(elicitations(records)).toEqual([
    { mode: "form", action: "accept", ...person, reason: undefined, digest: true },
    { mode: "form", action: "accept", ...person, reason: undefined, digest: true },
    { mode: "url", action: "accept", ...person, reason: undefined, digest: false },
    { mode: "form", ...unasked, reason: "the MCP client did not declare the elicitation capability for form mode, so it cannot be asked", digest: false },
    { mode: "form", ...unasked, reason: "the MCP client did not declare the elicitation capability for form mode, so it cannot be asked", digest: false },
    { mode: "url", ...unasked, reason: "the MCP client did not declare the elicitation capability for url mode, so it cannot be asked", digest: false },
  ]);
  const asked = records.filter((record) => record.kind === "call_elicitation_asked");
  expect(asked).toHaveLength(6);
  // Answered values are kept as a digest only (M9; the tool's own result says what it got), and the secret nowhere (E6).
  expect(JSON.stringify(records.filter((record) => record.kind.startsWith("call_elicitation_")))).not.toContain("Ada");
  expect(JSON.stringify(records)).not.toContain(SECRET);
}

describe("serve --mcp forwards a provider's request for input to its own MCP client", () => {
  it.each(["2025-11-25", "2026-07-28"] as const)(
    "M9 M11 over stdio, a %s client that declares elicitation is asked and its answer reaches the tool; one that does not is never asked and the tool sees a decline; the journal records both",
    async (era) => {
      const journal = path.join(temp.dir, `stdio-${era}.db`);
      const args = [FIXTURE_HOST, "serve", "--mcp", ...servedArgs(journal)];
      await exercise((client) => client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: "ignore" })), era);
      expectJournaled(await journalRecords(journal));
    },
    60_000,
  );

  it.each(["2025-11-25", "2026-07-28"] as const)(
    "M9 M11 over streamable HTTP, a %s client that declares elicitation is asked and its answer reaches the tool; one that does not is never asked and the tool sees a decline; the journal records both",
    async (era) => {
      const journal = path.join(temp.dir, `http-${era}.db`);
      await withHttpServer(FIXTURE_HOST, servedArgs(journal), async ({ port }) => {
        const url = new URL(`http://127.0.0.1:${port}/mcp`);
        await exercise((client) => client.connect(new StreamableHTTPClientTransport(url)), era);
      });
      expectJournaled(await journalRecords(journal));
    },
    60_000,
  );
});
