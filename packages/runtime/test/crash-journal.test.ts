import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Journal } from "@openworker/journal";
import { afterAll, describe, expect, it } from "vitest";

// A host killed with SIGKILL at a random moment under native and MCP load: every call a
// tool ran for, or an MCP call that returned, has its start in the journal, the chains
// verify, and the next open leaves no call without a terminal record (A3, E4).
const dist = path.resolve(import.meta.dirname, "../dist/index.js");
const registryDist = path.resolve(import.meta.dirname, "../../registry/dist/index.js");
const server = path.resolve(import.meta.dirname, "fixtures/mutable-server.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "ow-runtime-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function bundle(name: string, tools: string[]): string {
  const folder = path.join(dir, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "manifest.md"), "---\nname: crash\n---\nCalls tools until it is killed.\n");
  writeFileSync(path.join(folder, "tools.json"), JSON.stringify({ version: 3, tools }));
  return folder;
}

const hostScript = (journalPath: string, native: string, mcp: string) => `
  import { ToolRegistry } from ${JSON.stringify(registryDist)};
  import { Runtime } from ${JSON.stringify(dist)};
  const registry = new ToolRegistry();
  registry.register({
    descriptor: () => ({ name: "crash.noop", description: "Says it ran.", version: "1", inputSchema: { type: "object", properties: { n: { type: "integer" } } } }),
    // The tool runs only once its start is durable: what it prints must survive the kill.
    call: async (context) => (process.stdout.write("ran " + context.sessionId + " " + context.callId + "\\n"), { json: { ok: true } }),
  });
  registry.registerMcp({ namespace: "mut", program: process.execPath, args: [${JSON.stringify(server)}] });
  const runtime = await Runtime.openWithRegistry(registry, { workspace: ${JSON.stringify(dir)}, journal: { path: ${JSON.stringify(journalPath)} }, hostEntry: ${JSON.stringify(path.join(dir, "host.js"))} });
  const policy = { mode: "bypass" };
  const natives = await Promise.all(Array.from({ length: 6 }, () => runtime.openSession({ bundle: ${JSON.stringify(native)}, policy })));
  const mcp = await Promise.all(Array.from({ length: 2 }, () => runtime.openSession({ bundle: ${JSON.stringify(mcp)}, policy })));
  process.stdout.write("ready\\n");
  const loop = async (session, tool) => {
    for (let n = 0; ; n += 1) {
      const report = await session.callTool(tool, tool === "crash.noop" ? { n } : {});
      if (tool !== "crash.noop" && report.outcome === "succeeded") process.stdout.write("returned " + session.id + " " + report.callId + "\\n");
    }
  };
  await Promise.all([...natives.map((session) => loop(session, "crash.noop")), ...mcp.flatMap((session) => [loop(session, "mut.status_get"), loop(session, "mut.status_get")])]);
`;

function runAndKill(script: string, delayMs: number): Promise<string[][]> {
  return new Promise((resolve, reject) => {
    const host = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    const seen: string[][] = [];
    let rest = "";
    let stderr = "";
    host.stdout.setEncoding("utf8");
    host.stdout.on("data", (chunk: string) => {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        // The random moment counts from the first MCP call that returned, so both kinds of
        // call are in flight however slowly a loaded machine starts the provider.
        if (line.startsWith("returned ") && !seen.some(([kind]) => kind === "returned")) setTimeout(() => process.kill(-host.pid!, "SIGKILL"), delayMs);
        if (line.startsWith("ran ") || line.startsWith("returned ")) seen.push(line.split(" "));
      }
    });
    host.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    host.on("error", reject);
    // A provider that never answers must not hang the test: the kill comes anyway, and the assertions say what was missing.
    const fallback = setTimeout(() => process.kill(-host.pid!, "SIGKILL"), 60_000);
    host.once("close", () => clearTimeout(fallback));
    host.on("close", (code, signal) =>
      signal === "SIGKILL" ? resolve(seen) : reject(new Error(`host exited with ${code ?? signal} before the kill: ${stderr}`)),
    );
  });
}

describe.runIf(existsSync(dist))("a host killed under load (A3, E4)", () => {
  it("A3 E4 survives SIGKILL at random moments with native and MCP calls in flight: every start a tool ran for is journaled, the chains verify, no call stays open", async () => {
    writeFileSync(path.join(dir, "host.js"), "// crash host\n");
    const native = bundle("native", ["crash.noop"]);
    const mcp = bundle("mcp", ["mut.status_get"]);
    const file = path.join(dir, "journal.db");
    let interrupted = 0;
    let mcpReturned = 0;
    for (let round = 0; round < 4; round += 1) {
      const seen = await runAndKill(hostScript(file, native, mcp), 200 + Math.floor(Math.random() * 400));
      expect(seen.length, "calls ran before the kill").toBeGreaterThan(0);
      mcpReturned += seen.filter(([kind]) => kind === "returned").length;
      const journal = Journal.open({ path: file });
      try {
        interrupted += journal.recovered.length;
        expect(journal.warnings).toEqual([]);
        expect(journal.verify()).toMatchObject({ ok: true });
        const calls = new Map(
          journal
            .sessions()
            .flatMap((session) => journal.calls(session.sessionId))
            .map((call) => [call.callId, call]),
        );
        for (const [kind, , callId] of seen) {
          const call = calls.get(callId!);
          expect(call, `${kind} ${callId}`).toMatchObject({ started: true });
          expect(call!.outcome, `${kind} ${callId} ends`).toBeDefined();
        }
        for (const session of journal.sessions()) expect(session.openCalls).toBe(0);
      } finally {
        journal.close();
      }
    }
    // The kills must have caught calls in flight, or the test proves nothing.
    expect(interrupted).toBeGreaterThan(0);
    expect(mcpReturned, "MCP calls ran under the load too").toBeGreaterThan(0);
  }, 120_000);
});
