import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

/**
 * A PostgreSQL server of a test's own: `initdb` into a temporary folder, listening on 127.0.0.1 at a free port. `fsync` is off unless
 * `startPostgres({ fsync: true })` asks for it (a benchmark's figures): the server is thrown away.
 * @example
 * ```ts
 * const server = await startPostgres();
 * const journal = await PostgresJournal.open({ connectionString: await server.database("test") });
 * await server.stop();
 * ```
 */
export interface PostgresServer {
  readonly url: string;
  /** A connection string for a fresh database on the server. */
  database(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** The server binaries: `pg_config --bindir`, else the newest `/usr/lib/postgresql/<version>/bin`. Missing binaries fail the test. */
function binaries(): string {
  const candidates: string[] = [];
  try {
    candidates.push(execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim());
  } catch {
    // pg_config comes with the client package; the server's folder is looked up below.
  }
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) for (const version of readdirSync(root).sort((a, b) => Number(b) - Number(a))) candidates.push(path.join(root, version, "bin"));
  const found = candidates.find((dir) => existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "postgres")));
  if (found === undefined)
    throw new Error("PostgreSQL's initdb and postgres binaries were not found (pg_config --bindir, /usr/lib/postgresql/*/bin): install postgresql");
  return found;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the server. Run as root, initdb and postgres run as the `postgres` user. Missing binaries (`pg_config --bindir`,
 * `/usr/lib/postgresql/<version>/bin`) throw: install PostgreSQL.
 */
export async function startPostgres(options: { readonly fsync?: boolean } = {}): Promise<PostgresServer> {
  const bin = binaries();
  const dir = mkdtempSync(path.join(os.tmpdir(), "ow-pg-"));
  const data = path.join(dir, "data");
  // initdb and postgres refuse to run as root: they run as the postgres user, in a folder it owns. setpriv execs the program itself, so a
  // signal to the child reaches postgres.
  const asRoot = process.getuid?.() === 0;
  const run = (program: string, args: string[]): [string, string[]] =>
    asRoot ? ["setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", path.join(bin, program), ...args]] : [path.join(bin, program), args];
  if (asRoot) {
    const { uid, gid } = userIds("postgres");
    chmodSync(dir, 0o755);
    chownSync(dir, uid, gid);
  }
  const [initdb, initArgs] = run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  execFileSync(initdb, initArgs, { stdio: "pipe" });
  const port = await freePort();
  const [postgres, args] = run("postgres", [
    "-D",
    data,
    "-k",
    dir,
    "-h",
    "127.0.0.1",
    "-p",
    String(port),
    "-c",
    `fsync=${options.fsync === true ? "on" : "off"}`,
    "-c",
    "max_connections=60",
  ]);
  const server: ChildProcess = spawn(postgres, args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  server.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString()));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitForConnections(url, server, () => log);
  let databases = 0;
  return {
    url,
    async database(name) {
      databases += 1;
      const database = `${name.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}_${databases}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`CREATE DATABASE ${database}`);
      await client.end();
      return `postgres://postgres@127.0.0.1:${port}/${database}`;
    },
    async stop() {
      if (server.exitCode === null) {
        const exited = new Promise((resolve) => server.once("exit", resolve));
        server.kill("SIGINT");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function userIds(user: string): { uid: number; gid: number } {
  return {
    uid: Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim()),
    gid: Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim()),
  };
}

async function waitForConnections(url: string, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`postgres exited (${server.exitCode}): ${log()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections in 20 s (${String(error)}): ${log()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
