// Governed calls per second (not a test): each call is requested, approved, its start awaited (committed) and finished, by 32
// concurrent writers in one host, on PostgreSQL beside SQLite; then three host processes on one PostgreSQL database. Starts a
// PostgreSQL server of its own on 127.0.0.1. `pnpm --filter @openworker/journal-postgres bench` after a build; JOURNAL_BENCH_SECONDS
// sets each run's length (default 4, after an untimed warm-up of a quarter of it).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { argumentsDigest, Journal } from "@openworker/journal";
import { PostgresJournal } from "../dist/index.js";
import { startPostgres } from "../dist/testing.js";

const SECONDS = Number(process.env.JOURNAL_BENCH_SECONDS ?? 4);
const WRITERS = 32;
const args = { query: "battery status", limit: 10 };
const digest = argumentsDigest(args);

/** Runs WRITERS call loops (one session each) for the warm-up and then `seconds`; returns the calls of the timed part. */
async function governedCalls(journal, prefix, seconds) {
  const sessions = Array.from({ length: WRITERS }, (_, index) => `${prefix}-${index}`);
  for (const sessionId of sessions) journal.sessionOpened({ sessionId, executionIdentity: "owid3:bench", identityInputs: {}, workspace: "/w" });
  let counting = false;
  let stop = false;
  let calls = 0;
  let sequence = 0;
  const loop = async (sessionId) => {
    while (!stop) {
      const callId = `c${(sequence += 1)}`;
      journal.callRequested({ sessionId, turnId: "t1", callId, alias: "acer__battery", qualifiedName: "acer.battery", args, argsDigest: digest });
      journal.approvalDecided({ sessionId, callId, decision: "approved", by: "policy", scope: "session", key: "k" });
      await journal.callStarted({ sessionId, callId });
      journal.callFinished({ sessionId, callId, outcome: "succeeded", result: { percent: 87, charging: true } });
      if (counting) calls += 1;
    }
  };
  const loops = Promise.all(sessions.map(loop));
  await new Promise((resolve) => setTimeout(resolve, (seconds * 1000) / 4));
  counting = true;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  counting = false;
  const elapsed = (performance.now() - started) / 1000;
  stop = true;
  await loops;
  for (const sessionId of sessions) journal.sessionClosed({ sessionId });
  return { calls, elapsed };
}

const rate = ({ calls, elapsed }) => Math.round(calls / elapsed);
const format = (value) => value.toLocaleString("en-US");

if (process.argv[2] === "--host") {
  // One host of the fleet run: prints its calls and seconds as JSON.
  const journal = await PostgresJournal.open({ connectionString: process.argv[3] });
  const result = await governedCalls(journal, process.argv[4], SECONDS);
  await journal.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

// fsync on, as a production server runs: a start is acknowledged once its commit reached the disk.
const server = await startPostgres({ fsync: true });
const dir = mkdtempSync(path.join(os.tmpdir(), "journal-pg-bench-"));
try {
  const rows = [];
  const sqlite = Journal.open({ path: path.join(dir, "bench.db") });
  rows.push(["SQLite (`grouped`), one host, 32 writers", rate(await governedCalls(sqlite, "sqlite", SECONDS))]);
  sqlite.close();

  const pgOne = await PostgresJournal.open({ connectionString: await server.database("bench") });
  rows.push(["PostgreSQL, one host, 32 writers", rate(await governedCalls(pgOne, "pg", SECONDS))]);
  await pgOne.close();

  const fleet = await server.database("fleet");
  const self = fileURLToPath(import.meta.url);
  const hosts = await Promise.all(
    ["a", "b", "c"].map(
      (name) =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [self, "--host", fleet, `host-${name}`], { stdio: ["ignore", "pipe", "inherit"] });
          let out = "";
          child.stdout.on("data", (chunk) => (out += chunk));
          child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bench host ${name} exited ${code}`))));
        }),
    ),
  );
  rows.push(["PostgreSQL, three hosts × 32 writers (total)", hosts.reduce((sum, host) => sum + rate(host), 0)]);
  const check = await PostgresJournal.open({ connectionString: fleet, readonly: true });
  const report = await check.verify();
  await check.close();

  console.log(
    `governed calls/s (4 records each, start awaited; PostgreSQL 127.0.0.1, fsync on), ${SECONDS} s per run, Node.js ${process.version}, ${os.cpus().length} cores`,
  );
  console.log("| store | calls/s |\n|---|---|");
  for (const [label, value] of rows) console.log(`| ${label} | ${format(value)} |`);
  console.log(`fleet journal verify: ${report.ok ? "ok" : "BROKEN"}, ${format(report.records)} records in ${report.sessions} sessions`);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
