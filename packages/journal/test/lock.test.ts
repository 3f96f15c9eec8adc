import { spawn } from "node:child_process";
import { existsSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Journal, JOURNAL_ERRORS } from "../src/index.js";
import { codeOf, openSession, temporaryFolderPerTest } from "./helpers.js";

const dist = path.resolve(import.meta.dirname, "../dist/index.js");

const folder = temporaryFolderPerTest();

describe("one writer at a time (A3)", () => {
  it("A3 a second writer in the same process is refused; readers are not; the lock goes with close", async () => {
    const file = folder.file("journal.db");
    const journal = Journal.open({ path: file });
    openSession(journal, "s1");
    await journal.flush();
    expect(existsSync(`${file}-lock`)).toBe(true);
    const error = await codeOf(() => Journal.open({ path: file }));
    expect(error).toBe(JOURNAL_ERRORS.LOCKED);
    const reader = Journal.open({ path: file, readonly: true });
    expect(reader.sessions().map((session) => session.sessionId)).toEqual(["s1"]);
    reader.close();
    journal.close();
    // A clean close leaves no lock behind, and the writer keeps no other file beside the journal.
    expect(existsSync(`${file}-lock`)).toBe(false);
    expect(existsSync(`${file}-tail`)).toBe(false);
    const again = Journal.open({ path: file });
    expect(again.session("s1")).toBeDefined();
    again.close();
  });

  it("A3 a writer in another process holds the journal until it dies; its lock is then taken over", async () => {
    expect(existsSync(dist), "build the package first (the child imports dist/)").toBe(true);
    const file = folder.file("journal.db");
    const script = `
      import { Journal } from ${JSON.stringify(dist)};
      const journal = Journal.open({ path: ${JSON.stringify(file)} });
      process.stdout.write("open\\n");
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("open") && resolve());
        child.on("error", reject);
        child.on("exit", (code) => reject(new Error(`child exited early (${code})`)));
      });
      let thrown: unknown;
      try {
        Journal.open({ path: file });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: JOURNAL_ERRORS.LOCKED, details: { pid: child.pid } });
      expect(String((thrown as Error).message)).toContain(`process ${child.pid}`);
    } finally {
      const exited = new Promise((resolve) => child.on("close", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    // The holder is gone (a crash leaves its lock behind): the next writer takes over.
    expect(existsSync(`${file}-lock`)).toBe(true);
    const journal = Journal.open({ path: file });
    openSession(journal, "after");
    journal.close();
  });

  it("A3 four writers starting at once over a dead writer's lock: never two at a time, the others are refused", async () => {
    expect(existsSync(dist), "build the package first (the children import dist/)").toBe(true);
    const file = folder.file("journal.db");
    Journal.open({ path: file }).close();
    for (let round = 0; round < 5; round += 1) {
      writeFileSync(`${file}-lock`, "999999\n"); // a writer that no longer runs
      const at = Date.now() + 600;
      // Each writer reports when it held the journal. On a loaded machine a child can
      // start after the first writer has closed, and then rightly opens too: what must
      // never happen is two writers holding it at the same time.
      const script = `
        import { Journal } from ${JSON.stringify(dist)};
        while (Date.now() < ${at}) {}
        try {
          const journal = Journal.open({ path: ${JSON.stringify(file)} });
          const from = Date.now();
          await new Promise((resolve) => setTimeout(resolve, 800));
          const to = Date.now();
          journal.close();
          process.stdout.write(\`OPEN \${from} \${to}\\n\`);
        } catch (error) {
          process.stdout.write(\`REFUSED \${error.code}\\n\`);
        }
      `;
      const outputs = await Promise.all(
        Array.from({ length: 4 }, () => {
          const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
          let output = "";
          child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
          return new Promise<string>((resolve) => child.on("close", () => resolve(output.trim())));
        }),
      );
      const held = outputs.filter((output) => output.startsWith("OPEN ")).map((output) => output.split(" ").slice(1).map(Number) as [number, number]);
      const overlapping = held.some(([from, to], index) => held.some(([otherFrom, otherTo], other) => other !== index && from < otherTo && otherFrom < to));
      expect(overlapping, `round ${round}: ${outputs.join(", ")}`).toBe(false);
      expect(held.length, `round ${round}: ${outputs.join(", ")}`).toBeGreaterThanOrEqual(1);
      expect(
        outputs.filter((output) => !output.startsWith("OPEN ")).every((output) => output === `REFUSED ${JOURNAL_ERRORS.LOCKED}`),
        outputs.join(", "),
      ).toBe(true);
    }
  });

  it("A3 a lock file without a pid is taken over once it is old, and refused while it is new", async () => {
    const file = folder.file("journal.db");
    writeFileSync(`${file}-lock`, "");
    expect(await codeOf(() => Journal.open({ path: file }))).toBe(JOURNAL_ERRORS.LOCKED);
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}-lock`, old, old);
    Journal.open({ path: file }).close();
  });

  it("A3 a takeover in progress (a fresh takeover mutex) makes a starter wait and then refuse; one left by a crashed starter is cleared", async () => {
    const file = folder.file("journal.db");
    Journal.open({ path: file }).close();
    writeFileSync(`${file}-lock`, "999999\n"); // a writer that no longer runs
    writeFileSync(`${file}-lock.takeover`, ""); // another starter is taking it over right now
    const refused = await codeOf(() => Journal.open({ path: file }));
    expect(refused).toBe(JOURNAL_ERRORS.LOCKED);
    expect(existsSync(`${file}-lock.takeover`)).toBe(true); // a fresh mutex is never removed by another
    // That starter crashed holding it: once it is old, the next starter clears it and takes over.
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}-lock.takeover`, old, old);
    const journal = Journal.open({ path: file });
    openSession(journal, "after");
    journal.close();
    expect(existsSync(`${file}-lock.takeover`)).toBe(false);
  });

  it("A3 a takeover mutex is judged by its holder's pid: a live holder's stands, a dead holder's is cleared at once", async () => {
    const file = folder.file("journal.db");
    Journal.open({ path: file }).close();
    writeFileSync(`${file}-lock`, "999999\n"); // a writer that no longer runs
    writeFileSync(`${file}-lock.takeover`, `${process.pid}\n`); // a live starter holds it
    expect(await codeOf(() => Journal.open({ path: file }))).toBe(JOURNAL_ERRORS.LOCKED);
    expect(existsSync(`${file}-lock.takeover`)).toBe(true);
    // A live pid, but a mutex held far longer than any takeover takes (a reused pid): cleared.
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}-lock.takeover`, old, old);
    Journal.open({ path: file }).close();
    expect(existsSync(`${file}-lock.takeover`)).toBe(false);
    writeFileSync(`${file}-lock`, "999999\n");
    writeFileSync(`${file}-lock.takeover`, "999998\n"); // its holder died holding it
    Journal.open({ path: file }).close();
    expect(existsSync(`${file}-lock.takeover`)).toBe(false);
  });
});
