import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runTool } from "@openworker/tools-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNotifyTool, detectNotifier } from "../src/index.js";

// A real executable named notify-send on a private PATH: the adapter really spawns it.
let folder: string;
let record: string;

beforeAll(() => {
  folder = mkdtempSync(path.join(tmpdir(), "notify-test-"));
  record = path.join(folder, "calls.txt");
  const script = path.join(folder, "notify-send");
  writeFileSync(
    script,
    `#!/bin/sh\nif [ "$6" = "slow" ]; then sleep 30.25; fi\nif [ "$6" = "fail" ]; then echo "no display" >&2; exit 3; fi\nprintf '%s|' "$@" >> "${record}"\necho >> "${record}"\n`,
  );
  chmodSync(script, 0o755);
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("notification.notify", () => {
  it("T1 shows a notification through the platform command with the arguments unquoted by any shell", async () => {
    const notifier = detectNotifier("linux", folder);
    expect(notifier?.command).toBe("notify-send");
    const result = await runTool(createNotifyTool(notifier), { title: "Hi; rm -rf /", body: "it's done", urgency: "low" });
    expect(result.outcome).toBe("succeeded");
    expect(result.output?.json).toEqual({ shown: true, via: "notify-send" });
    expect(readFileSync(record, "utf8")).toContain("--urgency|low|--app-name|OpenWorker|--|Hi; rm -rf /|it's done|");
  });

  it("T1 where the platform has no notifier, returns the coded ToolError NOTIFIER_UNAVAILABLE", async () => {
    const result = await runTool(createNotifyTool(detectNotifier("linux", "/nonexistent")), { title: "x", body: "y" });
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe("NOTIFIER_UNAVAILABLE");
  });

  it("T1 a failing notifier command is a ToolError carrying its message", async () => {
    const result = await runTool(createNotifyTool(detectNotifier("linux", folder)), { title: "fail", body: "y" });
    expect(result.error).toMatchObject({ code: "NOTIFY_FAILED", message: expect.stringContaining("no display") });
  });

  it("T7 cancellation kills the notifier child and settles at once", async () => {
    const controller = new AbortController();
    const pending = runTool(createNotifyTool(detectNotifier("linux", folder)), { title: "slow", body: "y" }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const result = await pending;
    expect(result.outcome).toBe("cancelled");
    // The wrapper's own child (sleep) is gone too: the adapter kills the process group.
    // SIGKILL is sent at once; on a loaded machine the kernel may take a moment to end the
    // process, so this waits (up to 5 s) for it to disappear rather than sampling once.
    const sleeping = () =>
      execFileSync("ps", ["-eo", "stat=,args="], { encoding: "utf8" })
        .split("\n")
        .filter((line) => /^\S+\s+sleep 30\.25$/.test(line) && !line.startsWith("Z"));
    for (let waited = 0; sleeping().length > 0 && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sleeping()).toEqual([]);
  });

  it("T5 reports availability as a model-safe fact without I/O", () => {
    expect(createNotifyTool(undefined).modelContext?.("s")).toEqual({ desktopNotifications: "unavailable" });
  });
});
