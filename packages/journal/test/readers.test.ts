import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Journal } from "../src/index.js";
import { completeCall, openSession, temporaryFolderPerTest, untilReady } from "./helpers.js";

const child = path.resolve(import.meta.dirname, "fixtures/writer-child.mjs");

const folder = temporaryFolderPerTest();

describe("concurrent readers", () => {
  it("A3 a reader in another process reads and verifies while a writer process writes", async () => {
    const file = folder.file("journal.db");
    Journal.open({ path: file }).close();
    const writer = spawn(process.execPath, [child, file, "busy", "grouped"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await untilReady(writer);
      const reader = Journal.open({ path: file, readonly: true });
      try {
        let last = 0;
        for (let read = 0; read < 8; read += 1) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          const session = reader.session("busy");
          expect(session).toBeDefined();
          expect(session!.records).toBeGreaterThanOrEqual(last);
          last = session!.records;
          const report = reader.verify("busy");
          expect(report, JSON.stringify(report.firstBreak)).toMatchObject({ ok: true });
          expect(reader.calls("busy").length).toBeGreaterThan(0);
        }
        expect(last).toBeGreaterThan(1);
      } finally {
        reader.close();
      }
    } finally {
      writer.removeAllListeners("exit");
      const exited = new Promise((resolve) => writer.once("exit", resolve));
      writer.kill("SIGKILL");
      await exited;
    }
  });

  it("A3 a reader in the same process sees what the writer committed", async () => {
    const writer = Journal.open({ path: folder.file("journal.db") });
    const reader = Journal.open({ path: writer.path, readonly: true });
    try {
      openSession(writer, "s1");
      await completeCall(writer, "s1", "c1");
      await writer.flush();
      expect(reader.calls("s1")).toEqual([expect.objectContaining({ callId: "c1", outcome: "succeeded" })]);
      expect(reader.verify()).toMatchObject({ ok: true, records: 5 });
    } finally {
      reader.close();
      writer.close();
    }
  });
});
