import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// Opened in a child with a deadline: on such a path, a recursive mkdirSync under /proc
// never returns and ignores signals, which would hang the test worker itself.
const dist = path.resolve(import.meta.dirname, "../dist/index.js");
const dir = mkdtempSync(path.join(os.tmpdir(), "ow-journal-pseudo-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openInChild(file: string): { code?: string; message?: string; hung?: true } {
  const script = `import { Journal } from ${JSON.stringify(dist)};
try { Journal.open({ path: ${JSON.stringify(file)} }).close(); console.log(JSON.stringify({})); }
catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message })); }`;
  const ran = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 10_000, killSignal: "SIGKILL" });
  if (ran.signal === "SIGKILL") return { hung: true };
  return JSON.parse(ran.stdout.trim()) as { code?: string; message?: string };
}

describe.runIf(process.platform === "linux")("journal paths on kernel pseudo file systems", () => {
  it.each(["/proc/openworker-missing/deeper/journal.db", "/sys/openworker-missing/journal.db", "/dev/openworker-missing/journal.db"])(
    "A3 refuses %s at once, naming it, before creating any folder (JOURNAL_NOT_A_FILE)",
    (file) => {
      const outcome = openInChild(file);
      expect(outcome.hung).toBeUndefined();
      expect(outcome.code).toBe("JOURNAL_NOT_A_FILE");
      expect(outcome.message).toContain(JSON.stringify(file));
      expect(outcome.message).toMatch(/pseudo file system/);
    },
  );

  it("A3 refuses a path that reaches /proc through a symbolic link, naming both", () => {
    const link = path.join(dir, "to-proc");
    symlinkSync("/proc/self", link);
    const file = path.join(link, "missing", "journal.db");
    const outcome = openInChild(file);
    expect(outcome.code).toBe("JOURNAL_NOT_A_FILE");
    expect(outcome.message).toContain(JSON.stringify(file));
    expect(outcome.message).toMatch(/leads to "\/proc\//);
  });
});
