import { type ChildProcessByStdio, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { Readable } from "node:stream";
import os from "node:os";
import path from "node:path";
import type { JsonValue } from "@openworker/tools-sdk";
import { afterEach, beforeEach } from "vitest";
import Database from "better-sqlite3";
import { argumentsDigest, Journal, type VerifyReport } from "../src/index.js";

export interface TemporaryFolder {
  readonly dir: string;
  file(name: string): string;
  remove(): void;
}

/** A temporary folder removed by the returned cleanup. */
export function temporaryFolder(): TemporaryFolder {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ow-journal-test-"));
  return { dir, file: (name) => path.join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh temporary folder for each test of the calling file, removed after the test. */
export function temporaryFolderPerTest(): TemporaryFolder {
  let current: TemporaryFolder | undefined;
  beforeEach(() => {
    current = temporaryFolder();
  });
  afterEach(() => current?.remove());
  return {
    get dir() {
      return current!.dir;
    },
    file: (name) => current!.file(name),
    remove: () => current?.remove(),
  };
}

export function openSession(journal: Journal, sessionId: string, executionIdentity = "owid3:test"): void {
  journal.sessionOpened({ sessionId, executionIdentity, identityInputs: { note: "test" }, workspace: "/work" });
}

export function request(journal: Journal, sessionId: string, callId: string, args: JsonValue = { q: callId }): void {
  journal.callRequested({
    sessionId,
    turnId: "t1",
    callId,
    alias: "demo__run",
    qualifiedName: "demo.run",
    args,
    argsDigest: argumentsDigest(args),
  });
}

export function approve(journal: Journal, sessionId: string, callId: string, by: "person" | "policy" | "bypass" = "person"): void {
  journal.approvalDecided({ sessionId, callId, decision: "approved", by, scope: "once", key: `key-${callId}` });
}

/** Requested, approved, started (durable): a call left running. */
export async function startCall(journal: Journal, sessionId: string, callId: string): Promise<void> {
  request(journal, sessionId, callId);
  approve(journal, sessionId, callId);
  await journal.callStarted({ sessionId, callId });
}

/** Requested, approved, started (durable), finished. */
export async function completeCall(journal: Journal, sessionId: string, callId: string): Promise<void> {
  await startCall(journal, sessionId, callId);
  journal.callFinished({ sessionId, callId, outcome: "succeeded", result: { ok: true } });
}

/** The code of the error `run` throws (or the promise it returns rejects with). */
export async function codeOf(run: () => unknown): Promise<string | undefined> {
  try {
    await run();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

/** Changes the file behind the journal's back, as an attacker, a faulty disk or `sqlite3 copy.db "…"` would. */
export function tamperWith(file: string, sql: string, ...params: unknown[]): void {
  const db = new Database(file);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

/** `verify()` of the file through a read-only journal, closed afterwards. */
export function verifyFile(file: string, sessionId?: string): VerifyReport {
  const journal = Journal.open({ path: file, readonly: true });
  try {
    return journal.verify(sessionId);
  } finally {
    journal.close();
  }
}

/** Runs an ES module `script` in a child Node that must end by SIGKILLing itself (a writer's crash); resolves with what it printed. */
export function runUntilKilled(script: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const writer = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let text = "";
    writer.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    writer.on("error", reject);
    writer.on("close", (_code, signal) => (signal === "SIGKILL" ? resolve(text) : reject(new Error(`writer ended without SIGKILL: ${text}`))));
  });
}

/** Resolves once a writer child prints "ready"; rejects if it exits first. */
export function untilReady(writer: ChildProcessByStdio<null, Readable, null>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    writer.on("error", reject);
    writer.on("exit", (code) => reject(new Error(`writer exited early (${code})`)));
    writer.stdout.setEncoding("utf8");
    writer.stdout.on("data", (chunk: string) => {
      if (chunk.includes("ready")) resolve();
    });
  });
}
