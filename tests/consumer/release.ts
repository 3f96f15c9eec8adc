// The release of CONTRIBUTING.md, run for real against a local registry: a clone of the
// repository (what is committed), its install, `changeset version` to the next versions,
// the build, and `changeset publish` to Verdaccio started on 127.0.0.1 for the purpose.
// Consumers then install `@openworker/*` by name from it, as users install from npm.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { childEnv, publishedPackages, ROOT, run } from "./workspace.js";

export interface LocalRegistry {
  /** `http://127.0.0.1:PORT/`. */
  readonly url: string;
  /** `.npmrc` lines that send `@openworker/*` (and its publishing) to this registry. */
  readonly npmrc: string;
  stop(): Promise<void>;
}

export interface Release {
  readonly registry: LocalRegistry;
  /** The released version of each published package, by name. */
  readonly versions: Readonly<Record<string, string>>;
  /** What `changeset publish` printed. */
  readonly output: string;
  /** Removes the clone and stops the registry. */
  dispose(): Promise<void>;
}

const SERVER = path.join(ROOT, "tests", "consumer", "registry-server.mjs");

/** Starts Verdaccio in a child process and signs up the user that publishes. */
export async function startRegistry(): Promise<LocalRegistry> {
  const storage = mkdtempSync(path.join(tmpdir(), "ow-registry-"));
  const child = spawn(process.execPath, [SERVER, storage], { env: childEnv(), stdio: ["ignore", "pipe", "inherit"] });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(storage, { recursive: true, force: true });
  };
  try {
    const port = await listeningPort(child);
    const url = `http://127.0.0.1:${port}/`;
    const signUp = await fetch(`${url}-/user/org.couchdb.user:release`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "release", password: "release-test-only", type: "user", roles: [], date: new Date().toISOString() }),
    });
    const { token } = (await signUp.json()) as { token?: string };
    if (!signUp.ok || !token) throw new Error(`the local registry refused the sign-up (HTTP ${signUp.status})`);
    return { url, npmrc: `@openworker:registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the local registry did not start within 60 s")), 60_000);
    child.once("exit", (code, signal) => reject(new Error(`the local registry exited (${code ?? signal}) before it listened`)));
    createInterface({ input: child.stdout! }).once("line", (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { port: number }).port);
    });
  });
}

/** Clones the repository, versions, builds and publishes every public package to a new local registry. */
export async function releaseToLocalRegistry(): Promise<Release> {
  const registry = await startRegistry();
  const clone = mkdtempSync(path.join(tmpdir(), "ow-release-"));
  const dispose = async () => {
    rmSync(clone, { recursive: true, force: true });
    await registry.stop();
  };
  try {
    const env = childEnv();
    const inClone = { cwd: clone, env, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 };
    await run("git", ["clone", "--quiet", ROOT, clone], { env });
    writeFileSync(path.join(clone, ".npmrc"), registry.npmrc);
    await run("pnpm", ["install", "--frozen-lockfile", "--prefer-offline", "--reporter=append-only"], inClone);
    await run("pnpm", ["changeset", "version"], inClone);
    await run("pnpm", ["build"], { ...inClone, env: { ...env, TURBO_NO_UPDATE_NOTIFIER: "1" } });
    const published = await run("pnpm", ["changeset", "publish"], inClone);
    const versions: Record<string, string> = {};
    for (const pkg of publishedPackages()) {
      const manifest = JSON.parse(readFileSync(path.join(clone, path.relative(ROOT, pkg.dir), "package.json"), "utf8")) as { version: string };
      versions[pkg.name] = manifest.version;
    }
    return { registry, versions, output: `${published.stdout}${published.stderr}`, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}
