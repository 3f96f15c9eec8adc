// Compares the two SQLite drivers a journal on Node.js 22+ could use, on the journal's
// own write shape: group commits of frames (one row per session per commit, ~1.3 KB
// bodies) plus an upsert of each session's head row, in WAL mode, and a point read.
//
//   node packages/journal/bench/sqlite-drivers.mjs
//
// Prints rows/s for each driver and durability, and the time to open a database.
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

const require = createRequire(import.meta.url);
const BetterSqlite = require("better-sqlite3");
const { DatabaseSync } = await import("node:sqlite");

const BODY = "x".repeat(1300);
const SESSIONS = 32;
const GROUPS = 1500;
const ROUNDS = 3;

const drivers = {
  "better-sqlite3": (file) => {
    const db = new BetterSqlite(file);
    return { exec: (sql) => db.exec(sql), prepare: (sql) => db.prepare(sql), close: () => db.close() };
  },
  "node:sqlite": (file) => {
    const db = new DatabaseSync(file);
    return { exec: (sql) => db.exec(sql), prepare: (sql) => db.prepare(sql), close: () => db.close() };
  },
};

function run(name, synchronous) {
  const dir = mkdtempSync(path.join(tmpdir(), "ow-sqlite-"));
  try {
    const openedAt = performance.now();
    const db = drivers[name](path.join(dir, "journal.db"));
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA page_size = 16384; PRAGMA synchronous = ${synchronous};
      PRAGMA wal_autocheckpoint = 2500; PRAGMA cache_size = -16384; PRAGMA temp_store = memory;
      CREATE TABLE frames (id INTEGER PRIMARY KEY, session_ref INTEGER NOT NULL, first_seq INTEGER NOT NULL, prev_frame INTEGER, body TEXT NOT NULL);
      CREATE TABLE live_sessions (ref INTEGER PRIMARY KEY, head_frame INTEGER NOT NULL, seq INTEGER NOT NULL, hash TEXT NOT NULL, calls INTEGER NOT NULL, open_calls TEXT NOT NULL);`);
    const openMs = performance.now() - openedAt;
    const frame = db.prepare("INSERT INTO frames (id, session_ref, first_seq, prev_frame, body) VALUES (?, ?, ?, ?, ?)");
    const head = db.prepare(
      "INSERT INTO live_sessions (ref, head_frame, seq, hash, calls, open_calls) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (ref) DO UPDATE SET head_frame = excluded.head_frame, seq = excluded.seq, hash = excluded.hash, calls = excluded.calls, open_calls = excluded.open_calls",
    );
    const read = db.prepare("SELECT body FROM frames WHERE id = ?");
    let id = 0;
    const started = performance.now();
    for (let group = 0; group < GROUPS; group++) {
      db.exec("BEGIN IMMEDIATE");
      for (let session = 0; session < SESSIONS; session++) {
        id++;
        frame.run(id, session, group * 4, id > SESSIONS ? id - SESSIONS : null, BODY);
        head.run(session, id, group * 4 + 3, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", group, "{}");
      }
      db.exec("COMMIT");
    }
    const writeMs = performance.now() - started;
    const readStarted = performance.now();
    for (let n = 0; n < 50_000; n++) read.get(((n * 7919) % id) + 1);
    const readMs = performance.now() - readStarted;
    db.close();
    return { rowsPerSecond: (id / writeMs) * 1000, readsPerSecond: (50_000 / readMs) * 1000, openMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `Node.js ${process.version}; ${GROUPS} commits of ${SESSIONS} frames (${BODY.length} B) and ${SESSIONS} head upserts; best of ${ROUNDS} interleaved rounds`,
);
for (const synchronous of ["NORMAL", "FULL"]) {
  const best = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of Object.keys(drivers)) {
      const figures = run(name, synchronous);
      const seen = best[name];
      best[name] =
        seen === undefined
          ? figures
          : {
              rowsPerSecond: Math.max(seen.rowsPerSecond, figures.rowsPerSecond),
              readsPerSecond: Math.max(seen.readsPerSecond, figures.readsPerSecond),
              openMs: Math.min(seen.openMs, figures.openMs),
            };
    }
  }
  for (const [name, figures] of Object.entries(best)) {
    console.log(
      `${synchronous.padEnd(6)} ${name.padEnd(15)} ${Math.round(figures.rowsPerSecond).toLocaleString("en-US").padStart(9)} frames/s  ` +
        `${Math.round(figures.readsPerSecond).toLocaleString("en-US").padStart(9)} point reads/s  open ${figures.openMs.toFixed(2)} ms`,
    );
  }
}
