// Journal speed figures (not a test): appends/s with 32 concurrent writers (after an
// untimed warm-up of a fifth of the run), per-call
// overhead, a call's cost with thousands in flight in one session, recovery time of a 1,000,000-record file. `pnpm --filter @openworker/journal bench`
// after a build. Set JOURNAL_BENCH_RECORDS to change the recovery file size.
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { argumentsDigest, Journal } from "../dist/index.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "journal-bench-"));
const args = { query: "battery status", limit: 10 };
const digest = argumentsDigest(args);
let sequence = 0;

/** One call's four records: requested, approved, started (awaited: every 4th record), finished. */
async function oneCall(journal, sessionId) {
  const callId = `c${(sequence += 1)}`;
  journal.callRequested({ sessionId, turnId: "t1", callId, alias: "acer__battery", qualifiedName: "acer.battery", args, argsDigest: digest });
  journal.approvalDecided({ sessionId, callId, decision: "approved", by: "policy", scope: "session", key: "k" });
  await journal.callStarted({ sessionId, callId });
  journal.callFinished({ sessionId, callId, outcome: "succeeded", result: { percent: 87, charging: true } });
}

function openSessions(journal, count, prefix) {
  const ids = [];
  for (let index = 0; index < count; index += 1) {
    const sessionId = `${prefix}-${index}`;
    journal.sessionOpened({ sessionId, executionIdentity: "owid3:bench", identityInputs: {}, workspace: "/w" });
    ids.push(sessionId);
  }
  return ids;
}

async function concurrentWriters(durability, writers, callsPerWriter) {
  const journal = Journal.open({ path: path.join(dir, `writers-${durability}.db`), durability });
  const sessions = openSessions(journal, writers, durability);
  const load = (calls) =>
    Promise.all(
      sessions.map(async (sessionId) => {
        for (let index = 0; index < calls; index += 1) await oneCall(journal, sessionId);
      }),
    );
  // Steady state: a fifth of the run first, untimed (the JIT).
  await load(Math.ceil(callsPerWriter / 5));
  await journal.flush();
  const start = process.hrtime.bigint();
  await load(callsPerWriter);
  await journal.flush();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  journal.close();
  const records = writers * callsPerWriter * 4;
  console.log(
    `${durability.padEnd(7)} ${writers} concurrent writers: ${records} records in ${seconds.toFixed(2)} s = ${Math.round(records / seconds).toLocaleString("en")} records/s`,
  );
}

async function perCall(durability, calls) {
  const journal = Journal.open({ path: path.join(dir, `single-${durability}.db`), durability });
  const [sessionId] = openSessions(journal, 1, `single-${durability}`);
  await journal.flush();
  const start = process.hrtime.bigint();
  for (let index = 0; index < calls; index += 1) await oneCall(journal, sessionId);
  await journal.flush();
  const micros = Number(process.hrtime.bigint() - start) / 1e3 / calls;
  journal.close();
  console.log(`${durability.padEnd(7)} one writer, per call (requested+approved+started awaited+finished): ${micros.toFixed(1)} µs`);
}

/**
 * One session with `open` calls in flight at once (a host firing thousands of calls at one
 * session): each call's records while the others stay open. What a call costs should not
 * grow with how many are open beside it; the head row's open-call list, written with each
 * group, still does (see the README).
 */
let manyOpenRuns = 0;
async function manyOpen(open, print = true) {
  const run = `open-${open}-${(manyOpenRuns += 1)}`;
  const journal = Journal.open({ path: path.join(dir, `${run}.db`) });
  const [sessionId] = openSessions(journal, 1, run);
  await journal.flush();
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: open }, () => oneCall(journal, sessionId)));
  await journal.flush();
  const micros = Number(process.hrtime.bigint() - start) / 1e3 / open;
  journal.close();
  if (print) console.log(`grouped one session, ${open.toLocaleString("en")} calls in flight at once: ${micros.toFixed(1)} µs a call`);
}

/**
 * Open + recovery of a crashed journal: a child writes `records` records over 100
 * sessions, leaves 1,000 calls open (500 started, 500 waiting for approval) and is killed
 * with SIGKILL; the next open recovers. What it costs must follow the open calls, not the
 * history.
 */
async function recovery(records) {
  const file = path.join(dir, "recovery.db");
  const script = `
    import { argumentsDigest, Journal } from ${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)};
    const journal = Journal.open({ path: ${JSON.stringify(file)} });
    const args = ${JSON.stringify(args)};
    const argsDigest = argumentsDigest(args);
    const sessions = Array.from({ length: 100 }, (_, index) => "rec-" + index);
    for (const sessionId of sessions) journal.sessionOpened({ sessionId, executionIdentity: "owid3:bench", identityInputs: {}, workspace: "/w" });
    let written = 100;
    let sequence = 0;
    const oneCall = async (sessionId) => {
      const callId = "c" + (sequence += 1);
      journal.callRequested({ sessionId, turnId: "t1", callId, alias: "acer__battery", qualifiedName: "acer.battery", args, argsDigest });
      journal.approvalDecided({ sessionId, callId, decision: "approved", by: "policy", scope: "session", key: "k" });
      await journal.callStarted({ sessionId, callId });
      journal.callFinished({ sessionId, callId, outcome: "succeeded", result: { percent: 87, charging: true } });
    };
    const perSession = Math.ceil((${records} - 100) / 4 / sessions.length);
    for (const sessionId of sessions) {
      const batch = [];
      for (let index = 0; index < perSession && written < ${records}; index += 1, written += 4) batch.push(oneCall(sessionId));
      await Promise.all(batch);
    }
    const starts = [];
    for (let index = 0; index < 1000; index += 1) {
      const callId = "open-" + index;
      const sessionId = sessions[index % sessions.length];
      journal.callRequested({ sessionId, turnId: "t1", callId, alias: "acer__battery", qualifiedName: "acer.battery", args, argsDigest });
      if (index % 2 === 0) {
        journal.approvalDecided({ sessionId, callId, decision: "approved", by: "person", scope: "once", key: "k" });
        starts.push(journal.callStarted({ sessionId, callId }));
      }
    }
    await Promise.all(starts);
    await journal.flush();
    process.kill(process.pid, "SIGKILL");
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "inherit", "inherit"] });
  await new Promise((resolve) => child.on("close", resolve));
  const megabytes = (statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0)) / 1e6;
  const start = process.hrtime.bigint();
  const reopened = Journal.open({ path: file });
  const openMs = Number(process.hrtime.bigint() - start) / 1e6;
  const interrupted = reopened.recovered.length;
  const verifyStart = process.hrtime.bigint();
  const report = reopened.verify();
  const verifyMs = Number(process.hrtime.bigint() - verifyStart) / 1e6;
  reopened.close();
  console.log(
    `open + recovery of a crashed ${report.records.toLocaleString("en")}-record journal (${megabytes.toFixed(0)} MB, killed with SIGKILL): ${openMs.toFixed(0)} ms, ${interrupted} calls marked interrupted; full verify ${verifyMs.toFixed(0)} ms (ok: ${report.ok})`,
  );
}

/**
 * Open after a kill -9 under load: a writer child (the crash tests' fixture, 8 lanes)
 * runs for `runMs`, is killed, and the next open recovers.
 */
async function crashRecovery(runMs) {
  const file = path.join(dir, "crash.db");
  const child = spawn(process.execPath, [fileURLToPath(new URL("../test/fixtures/writer-child.mjs", import.meta.url)), file, "crash", "grouped"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let acked = 0;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    acked += chunk.split("\nacked ").length - 1;
    if (chunk.includes("ready")) setTimeout(() => child.kill("SIGKILL"), runMs);
  });
  await new Promise((resolve) => child.on("close", resolve));
  const start = process.hrtime.bigint();
  const journal = Journal.open({ path: file });
  const openMs = Number(process.hrtime.bigint() - start) / 1e6;
  const ok = journal.verify().ok;
  journal.close();
  console.log(
    `open after kill -9 under load (${runMs} ms of writing, ~${acked.toLocaleString("en")} starts acknowledged): open + recovery ${openMs.toFixed(0)} ms, ${journal.recovered.length} calls interrupted (verify ok: ${ok})`,
  );
}

/**
 * The -wal under writes that never pause: 32 writers with 2 KB results for `seconds`
 * (SQLite checkpoints on the writer's connection). Prints the -wal's largest size and how many
 * times writing restarted it from its beginning (its header's checkpoint count): it must
 * keep restarting (bounded), not grow with everything written.
 */
async function sustainedWal(seconds) {
  const file = path.join(dir, "sustained.db");
  const journal = Journal.open({ path: file });
  const restarts = () => {
    const header = Buffer.alloc(16);
    const fd = openSync(`${file}-wal`, "r");
    try {
      return readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : 0;
    } finally {
      closeSync(fd);
    }
  };
  const result = { text: "x".repeat(2_000) };
  const end = Date.now() + seconds * 1000;
  let records = 0;
  let maxWal = 0;
  let first;
  let last = 0;
  for (let session = 0; session < 32; session += 1) {
    journal.sessionOpened({ sessionId: `w${session}`, executionIdentity: "owid3:bench", identityInputs: {}, workspace: "/bench" });
  }
  await Promise.all(
    Array.from({ length: 32 }, async (_, session) => {
      const sessionId = `w${session}`;
      for (let call = 0; Date.now() < end; call += 1) {
        const callId = `c${call}`;
        journal.callRequested({ sessionId, turnId: "t1", callId, alias: "bench__run", qualifiedName: "bench.run", args: {} });
        journal.approvalDecided({ sessionId, callId, decision: "approved", by: "bypass", scope: "once", key: "bench" });
        await journal.callStarted({ sessionId, callId });
        journal.callFinished({ sessionId, callId, outcome: "succeeded", result });
        records += 4;
        if (call % 64 === 0 && existsSync(`${file}-wal`)) {
          maxWal = Math.max(maxWal, statSync(`${file}-wal`).size);
          last = restarts();
          first ??= last;
        }
      }
    }),
  );
  const written = statSync(file).size;
  journal.close();
  console.log(
    `sustained writes (32 writers, 2 KB results, ${seconds} s): ${records.toLocaleString("en")} records, database ${(written / 1e6).toFixed(0)} MB; ` +
      `-wal at most ${(maxWal / 1e6).toFixed(0)} MB, restarted ${last - (first ?? 0)} times`,
  );
}

try {
  await concurrentWriters("grouped", 32, 3_000);
  await concurrentWriters("strict", 32, 300);
  await perCall("grouped", 5_000);
  await perCall("strict", 300);
  await manyOpen(1_600, false); // warm-up: the figures below are not the JIT's first steps
  for (const open of [1_600, 25_600]) await manyOpen(open);
  await recovery(Number(process.env.JOURNAL_BENCH_RECORDS ?? 1_000_000));
  await crashRecovery(3_000);
  await sustainedWal(10);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
