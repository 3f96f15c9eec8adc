import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { Runtime } from "@openworker/runtime";
import { codeTool } from "@openworker/tools-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresJournal } from "../src/index.js";
import { startPostgres, type PostgresServer } from "../src/testing/postgres-server.js";

let server: PostgresServer;
let dir: string;
beforeAll(async () => {
  server = await startPostgres();
  dir = mkdtempSync(path.join(os.tmpdir(), "ow-pg-runtime-"));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const echo = codeTool(
  "fleet.echo",
  "Echo the arguments back.",
  { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  (args) => ({ ok: args }),
);

/** One host: a runtime writing its sessions to the fleet's PostgreSQL journal. The host entry's bytes are the same on every host. */
async function host(url: string, asked: string[], name: string): Promise<{ runtime: Runtime<PostgresJournal>; journal: PostgresJournal }> {
  const journal = await PostgresJournal.open({ connectionString: url, hostLabel: name });
  const registry = new ToolRegistry();
  registry.register(echo);
  const runtime = await Runtime.openWithRegistry(registry, {
    workspace: dir,
    journal,
    hostEntry: path.join(dir, "host.js"),
    approver: () => (asked.push(name), { approved: true, scope: "session", who: name }),
  });
  return { runtime, journal };
}

describe("a runtime on the PostgreSQL journal", () => {
  it("A2, A3: two hosts' runtimes journal their calls in one database and share a remembered approval", async () => {
    writeFileSync(path.join(dir, "host.js"), "// the fleet's host v1\n");
    const bundle = path.join(dir, "bundle");
    mkdirSync(bundle, { recursive: true });
    writeFileSync(path.join(bundle, "manifest.md"), "---\nname: Fleet coworker\n---\nYou echo.\n");
    writeFileSync(path.join(bundle, "tools.json"), JSON.stringify({ version: 3, tools: ["fleet.echo"] }));
    const url = await server.database("runtime");
    const asked: string[] = [];
    const a = await host(url, asked, "host-a");
    const b = await host(url, asked, "host-b");
    try {
      const first = await a.runtime.openSession({ bundle, sessionId: "ses_fleet_a" });
      expect(await first.callTool("fleet.echo", { text: "from a" })).toMatchObject({ outcome: "succeeded", approval: { approved: true } });
      await first.close();
      // B runs the same bundle on the same host bytes: the same execution identity, so A's session approval answers (A2).
      const second = await b.runtime.openSession({ bundle, sessionId: "ses_fleet_b" });
      expect(await second.callTool("fleet.echo", { text: "from b" })).toMatchObject({ outcome: "succeeded", approval: { approved: true } });
      await second.close();
      expect(asked).toEqual(["host-a"]);
      const calls = await b.journal.calls("ses_fleet_b");
      expect(calls).toMatchObject([{ qualifiedName: "fleet.echo", decision: "approved", started: true, outcome: "succeeded" }]);
      expect(await b.journal.verify()).toMatchObject({ ok: true, sessions: 2 });
    } finally {
      await Promise.all([a.runtime.close(), b.runtime.close()]);
      await Promise.all([a.journal.close(), b.journal.close()]);
    }
  });
});
