import { execFileSync, spawn } from "node:child_process";
import { closeSync, constants, existsSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { REGISTRY_ERROR_CODES, ToolRegistry } from "../src/index.js";
import { readConfigFile } from "../src/internal.js";
import { rejected } from "./helpers.js";

const root = mkdtempSync(path.join(os.tmpdir(), "ow-config-file-"));
const fifos: string[] = [];
afterAll(() => rmSync(root, { recursive: true, force: true }));
// Without the fix a read waits in a libuv thread for a writer; open each FIFO for writing
// once so that no test run is left with a blocked thread.
afterEach(() => {
  for (const fifo of fifos.splice(0)) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody is reading it, which is the point.
    }
  }
});

function fifo(name: string): string {
  const file = path.join(root, name);
  execFileSync("mkfifo", [file]);
  fifos.push(file);
  return file;
}

/** Settles with the promise's outcome, or with "hang" after `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | "hang"> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<"hang">((resolve) => (timer = setTimeout(() => resolve("hang"), ms)));
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

describe("readConfigFile: only regular files", () => {
  it("M1 a servers file that is a FIFO fails SERVERS_FILE_NOT_A_FILE at once instead of waiting for a writer", async () => {
    const file = fifo("servers.json");
    const outcome = await within(rejected(new ToolRegistry().loadServersFile(file)), 2_000);
    expect(outcome).not.toBe("hang");
    const error = outcome as Exclude<typeof outcome, "hang">;
    expect(error.code).toBe("SERVERS_FILE_NOT_A_FILE");
    expect(error.message).toBe(
      `${file}: is a FIFO (named pipe), not a regular file; reading it could wait for ever or never end, so give the path of a regular file`,
    );
    expect(error.details).toEqual({ file, kind: "fifo" });
  });

  it.each([
    ["/dev/null", "character-device"],
    ["/dev/zero", "character-device"],
  ])("M1 a servers file that is (a link to) %s fails SERVERS_FILE_NOT_A_FILE", async (device, kind) => {
    if (!existsSync(device)) return;
    const link = path.join(root, `link-to-${path.basename(device)}.json`);
    symlinkSync(device, link);
    for (const file of [device, link]) {
      const error = await rejected(new ToolRegistry().loadServersFile(file));
      expect(error.code).toBe("SERVERS_FILE_NOT_A_FILE");
      expect(error.message).toContain(`${file}: is a character device`);
      expect(error.details).toMatchObject({ file, kind });
    }
  });

  it("M1 a servers file that is a unix socket fails SERVERS_FILE_NOT_A_FILE", async () => {
    const file = path.join(root, "servers.sock");
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(file, resolve));
    try {
      const error = await rejected(readConfigFile(file, { codePrefix: "SERVERS_FILE" }));
      expect(error.code).toBe("SERVERS_FILE_NOT_A_FILE");
      expect(error.details).toMatchObject({ kind: "socket" });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("M1 a path swapped between a regular file and a FIFO while it is read never hangs", async () => {
    // A child process flips a symlink between the two as fast as it can, so some reads
    // find the FIFO after the stat() said "regular file": the open must not wait then.
    const pipe = fifo("swap.fifo");
    const regular = path.join(root, "swap.json");
    writeFileSync(regular, '{"servers":{}}');
    const target = path.join(root, "swapped.json");
    const flipper = spawn(
      process.execPath,
      [
        "-e",
        `const fs = require("node:fs");
         const [pipe, regular, target] = process.argv.slice(1);
         const end = Date.now() + 1500;
         for (let i = 0; Date.now() < end; i++) {
           const temporary = target + ".tmp";
           try { fs.unlinkSync(temporary); } catch {}
           fs.symlinkSync(i % 2 ? pipe : regular, temporary);
           fs.renameSync(temporary, target);
         }`,
        pipe,
        regular,
        target,
      ],
      { stdio: "ignore" },
    );
    const done = new Promise((resolve) => flipper.once("exit", resolve));
    let finished = false;
    void done.then(() => (finished = true));
    const codes = new Set<string>();
    try {
      while (!finished) {
        const outcome = await within(
          readConfigFile(target, { codePrefix: "SERVERS_FILE" }).then(
            // Opened without waiting, a FIFO would read as empty: only the real contents count as read.
            ({ text }) => (text === '{"servers":{}}' ? "read" : `read ${JSON.stringify(text)}`),
            (error: { code?: string }) => error.code ?? "uncoded",
          ),
          2_000,
        );
        expect(outcome).not.toBe("hang");
        codes.add(outcome as string);
      }
    } finally {
      flipper.kill();
      await done;
    }
    expect([...codes].filter((code) => !["read", "SERVERS_FILE_NOT_A_FILE", "SERVERS_FILE_NOT_FOUND"].includes(code))).toEqual([]);
  }, 10_000);
});

describe("loadServersFile: every code it throws is listed in REGISTRY_ERROR_CODES", () => {
  it("M1 not found, a folder, too large, not UTF-8, a FIFO and bad JSON each have a listed code", async () => {
    const large = path.join(root, "large.json");
    writeFileSync(large, " ".repeat(1024 * 1024 + 1));
    const latin1 = path.join(root, "latin1.json");
    writeFileSync(latin1, Buffer.from([0x7b, 0xe9, 0x7d]));
    const broken = path.join(root, "broken.json");
    writeFileSync(broken, "{servers:{}}");
    const cases: [string, string][] = [
      [path.join(root, "missing.json"), "SERVERS_FILE_NOT_FOUND"],
      [root, "SERVERS_FILE_IS_DIRECTORY"],
      [large, "SERVERS_FILE_TOO_LARGE"],
      [latin1, "SERVERS_FILE_NOT_UTF8"],
      [fifo("servers-codes.fifo"), "SERVERS_FILE_NOT_A_FILE"],
      [broken, "SERVERS_FILE_INVALID_JSON"],
    ];
    const listed = new Set<string>(Object.values(REGISTRY_ERROR_CODES));
    for (const [file, code] of cases) {
      const error = await rejected(new ToolRegistry().loadServersFile(file));
      expect(error.code).toBe(code);
      expect(listed.has(error.code), `${code} is listed`).toBe(true);
    }
  });
});
