import { writeFileSync } from "node:fs";
import path from "node:path";
import { Client, StreamableHTTPClientTransport, type StandardSchemaV1 } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, it, vi } from "vitest";
import { FIXTURE_HOST, REPO, runEntry, sessionsOf, tempDir, withHttpServer, writeBundle } from "./helpers.js";

const temp = tempDir("mcp-elicitation-hostile");
afterAll(() => temp.cleanup());

const INFO = { name: "test-client", version: "1.0.0" };
const PROVIDERS = path.join(REPO, "packages/mcp-bridge/test/fixtures");
/** The call bound of the `bounded` provider: it ends a request for input nobody answers. */
const CALL_BOUND_MS = 2_000;

/**
 * `legacy` and `modern` ask mid-call (2025-11-25 and 2026-07-28 providers); `bounded` is
 * `legacy` with a call bound of {@link CALL_BOUND_MS}.
 */
function servedArgs(journal: string, more: readonly string[] = []): string[] {
  const servers = path.join(temp.dir, "servers.json");
  const provider = (file: string, bound?: number) => ({
    transport: "stdio",
    command: process.execPath,
    args: [path.join(PROVIDERS, file)],
    ...(bound === undefined ? {} : { callTimeoutMs: bound }),
  });
  writeFileSync(
    servers,
    JSON.stringify({
      servers: { legacy: provider("elicit-legacy.mjs"), modern: provider("elicit-modern.mjs"), bounded: provider("elicit-legacy.mjs", CALL_BOUND_MS) },
    }),
  );
  const bundle = writeBundle(path.join(temp.dir, "bundle"), JSON.stringify({ version: 1, mcpServers: ["legacy", "modern", "bounded"] }));
  return ["--bundle", bundle, "--servers", servers, "--approve", "yes", "--journal", journal, ...more];
}

const ELICITATION = { elicitation: { form: {}, url: {} } };
/** A 2026-07-28 client that fulfils `input_required` itself (manual mode), so a test can hold, forge or replay its state. */
const manualClient = () =>
  new Client(INFO, { capabilities: ELICITATION, versionNegotiation: { mode: { pin: "2026-07-28" } }, inputRequired: { autoFulfill: false } });

/** Accepts any result as it came. */
const RAW: StandardSchemaV1<unknown, unknown> = { "~standard": { version: 1, vendor: "test", validate: (value: unknown) => ({ value }) } };

type InputRequired = { resultType: "input_required"; inputRequests: Record<string, { params: { message: string } }>; requestState: string };
type ToolResult = { isError?: boolean; content: { type: string; text?: string }[] };

function round(client: Client, name: string, retry?: { requestState: string; inputResponses: Record<string, unknown> }) {
  return client.request({ method: "tools/call", params: { name, arguments: {}, ...retry } }, RAW, { allowInputRequired: true }) as Promise<
    InputRequired | ToolResult
  >;
}

const url = (port: number) => new URL(`http://127.0.0.1:${port}/mcp`);

/** The calls of every session of the journal, as `journal show --json` lists them. */
async function journaledCalls(journal: string) {
  const calls: { qualifiedName: string; outcome?: string; elicitations?: { action?: string; by?: string; who?: string }[] }[] = [];
  for (const { sessionId } of await sessionsOf(journal)) {
    const shown = await runEntry(FIXTURE_HOST, ["journal", "show", sessionId, "--json", "--journal", journal]);
    calls.push(...(JSON.parse(shown.stdout) as { calls: typeof calls }).calls);
  }
  return calls;
}

describe("serve --mcp against clients that answer requests for input badly", () => {
  it("M9 M11 a 2026-07-28 client's forged or replayed requestState is refused; the true one answers the parked call once", async () => {
    const journal = path.join(temp.dir, "forged.db");
    await withHttpServer(FIXTURE_HOST, servedArgs(journal), async ({ port }) => {
      const client = manualClient();
      await client.connect(new StreamableHTTPClientTransport(url(port)));
      const asked = (await round(client, "legacy__ask")) as InputRequired;
      expect(asked.resultType).toBe("input_required");
      const [key] = Object.keys(asked.inputRequests);
      const answer = (name: string) => ({ [key!]: { action: "accept", content: { name } } });
      const refused = { code: -32602, message: "Invalid or expired requestState", data: { reason: "invalid_request_state" } };
      // A changed signature, a payload from elsewhere, and no state of this server at all.
      const [head, body, mac] = asked.requestState.split(".");
      const forgedBody = Buffer.from(Buffer.from(body!, "base64url").toString("utf8").replace('"asked":[1]', '"asked":[2]')).toString("base64url");
      for (const requestState of [`${head}.${body}.${mac!.slice(0, -2)}AA`, `${head}.${forgedBody}.${mac}`, "not-a-state"]) {
        await expect(round(client, "legacy__ask", { requestState, inputResponses: answer("Eve") })).rejects.toMatchObject(refused);
      }
      // The true state under another tool's name is refused too: it names a call of legacy__ask.
      await expect(round(client, "modern__ask", { requestState: asked.requestState, inputResponses: answer("Eve") })).rejects.toMatchObject(refused);
      const done = (await round(client, "legacy__ask", { requestState: asked.requestState, inputResponses: answer("Ada") })) as ToolResult;
      expect(JSON.parse(done.content[0]!.text!)).toEqual({ action: "accept", content: { name: "Ada" } });
      // A replay finds nothing waiting.
      await expect(round(client, "legacy__ask", { requestState: asked.requestState, inputResponses: answer("Eve") })).rejects.toMatchObject(refused);
      await client.close();
    });
    expect(await journaledCalls(journal)).toEqual([
      expect.objectContaining({
        qualifiedName: "legacy.ask",
        outcome: "succeeded",
        elicitations: [expect.objectContaining({ action: "accept", by: "person" })],
      }),
    ]);
  }, 60_000);

  it.each(["2025-11-25", "2026-07-28"] as const)(
    "M9 M11 several concurrent calls of a %s client, each asking, each get their own answer",
    async (era) => {
      await withHttpServer(FIXTURE_HOST, servedArgs(path.join(temp.dir, `concurrent-${era}.db`)), async ({ port }) => {
        const client = new Client(INFO, { capabilities: ELICITATION, ...(era === "2026-07-28" ? { versionNegotiation: { mode: { pin: era } } } : {}) });
        let asked = 0;
        // Each request is answered only once all four were asked: the calls are parked side by side.
        let release = () => undefined as void;
        const allAsked = new Promise<void>((resolve) => (release = resolve));
        client.setRequestHandler("elicitation/create", async () => {
          const name = `caller-${(asked += 1)}`;
          if (asked === 4) release();
          await allAsked;
          return { action: "accept", content: { name } };
        });
        await client.connect(new StreamableHTTPClientTransport(url(port)));
        const results = await Promise.all([1, 2, 3, 4].map(() => client.callTool({ name: "modern__ask", arguments: {} }) as Promise<ToolResult>));
        const names = results.map((result) => (JSON.parse(result.content[0]!.text!) as { content: { name: string } }).content.name);
        expect(names.toSorted()).toEqual(["caller-1", "caller-2", "caller-3", "caller-4"]);
        await client.close();
      });
    },
    60_000,
  );

  it("M9 M10 a 2025-11-25 client that never answers: the call's bound withdraws the request (the client is told) and the call answers its timeout", async () => {
    const journal = path.join(temp.dir, "never-legacy.db");
    await withHttpServer(FIXTURE_HOST, servedArgs(journal), async ({ port }) => {
      const client = new Client(INFO, { capabilities: ELICITATION });
      const withdrawn = new Promise<void>((resolve) =>
        client.setRequestHandler(
          "elicitation/create",
          (_request, context) => new Promise(() => context.mcpReq.signal.addEventListener("abort", () => resolve())),
        ),
      );
      await client.connect(new StreamableHTTPClientTransport(url(port)));
      const result = (await client.callTool({ name: "bounded__ask", arguments: {} })) as ToolResult;
      await withdrawn;
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toContain("TOOL_TIMEOUT");
      await client.close();
    });
    expect(await journaledCalls(journal)).toEqual([
      expect.objectContaining({
        qualifiedName: "bounded.ask",
        outcome: "timed_out",
        elicitations: [expect.objectContaining({ action: "decline", by: "runtime" })],
      }),
    ]);
  }, 60_000);

  it("M9 M11 a 2026-07-28 client that never retries: the call's bound ends the parked call, its state is refused afterwards, and the shared session can expire", async () => {
    const journal = path.join(temp.dir, "never-modern.db");
    await withHttpServer(FIXTURE_HOST, servedArgs(journal, ["--idle-timeout", "1"]), async ({ port, stderr }) => {
      const client = manualClient();
      await client.connect(new StreamableHTTPClientTransport(url(port)));
      const asked = (await round(client, "bounded__ask")) as InputRequired;
      expect(asked.resultType).toBe("input_required");
      await vi.waitFor(async () => expect((await journaledCalls(journal))[0]?.outcome).toBe("timed_out"), { timeout: 20_000, interval: 200 });
      const retry = {
        requestState: asked.requestState,
        inputResponses: { [Object.keys(asked.inputRequests)[0]!]: { action: "accept", content: { name: "Ada" } } },
      };
      await expect(round(client, "bounded__ask", retry)).rejects.toMatchObject({ code: -32602 });
      // Nothing holds the shared session once the parked call ended.
      await vi.waitFor(() => expect(stderr()).toContain("closing the OpenWorker session of 2026-07-28 clients: idle for 1 s"), {
        timeout: 20_000,
        interval: 100,
      });
      await client.close();
    });
    expect((await journaledCalls(journal))[0]).toMatchObject({ elicitations: [{ action: "decline", by: "runtime" }] });
  }, 60_000);

  it("M9 a 2025-11-25 client that cancels its call while asked cancels the call, and its request for input is withdrawn", async () => {
    const journal = path.join(temp.dir, "cancel.db");
    await withHttpServer(FIXTURE_HOST, servedArgs(journal), async ({ port }) => {
      const client = new Client(INFO, { capabilities: ELICITATION });
      const cancel = new AbortController();
      const withdrawn = new Promise<void>((resolve) =>
        client.setRequestHandler("elicitation/create", (_request, context) => {
          context.mcpReq.signal.addEventListener("abort", () => resolve());
          cancel.abort();
          return new Promise(() => undefined);
        }),
      );
      await client.connect(new StreamableHTTPClientTransport(url(port)));
      await expect(client.callTool({ name: "legacy__ask", arguments: {} }, { signal: cancel.signal })).rejects.toThrow(/abort/i);
      await withdrawn;
      await vi.waitFor(async () => expect((await journaledCalls(journal))[0]?.outcome).toBe("cancelled"), { timeout: 20_000, interval: 200 });
      await client.close();
    });
    expect((await journaledCalls(journal))[0]).toMatchObject({ elicitations: [{ action: "decline", by: "runtime" }] });
  }, 60_000);

  it("M9 M11 the server stopping while calls wait for input answers the 2025 client's call as a stop does, and ends the 2026-07-28 client's parked call", async () => {
    const journal = path.join(temp.dir, "stop.db");
    await withHttpServer(FIXTURE_HOST, servedArgs(journal), async ({ port, child }) => {
      const legacy = new Client(INFO, { capabilities: ELICITATION });
      let askedLegacy = () => undefined as void;
      const legacyAsked = new Promise<void>((resolve) => (askedLegacy = resolve));
      legacy.setRequestHandler("elicitation/create", () => (askedLegacy(), new Promise(() => undefined)));
      await legacy.connect(new StreamableHTTPClientTransport(url(port)));
      const modern = manualClient();
      await modern.connect(new StreamableHTTPClientTransport(url(port)));
      expect(((await round(modern, "modern__ask")) as InputRequired).resultType).toBe("input_required");
      const legacyCall = legacy.callTool({ name: "legacy__ask", arguments: {} }) as Promise<ToolResult>;
      await legacyAsked;
      child.kill("SIGTERM");
      const stopped = await legacyCall;
      expect(stopped).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^Error CLI_INTERRUPTED: the MCP server is stopping/) }] });
    });
    const calls = await journaledCalls(journal);
    expect(calls.map((call) => [call.qualifiedName, call.outcome, call.elicitations?.[0]?.by])).toEqual(
      expect.arrayContaining([
        ["legacy.ask", "cancelled", "runtime"],
        ["modern.ask", "cancelled", "runtime"],
      ]),
    );
  }, 60_000);
});
