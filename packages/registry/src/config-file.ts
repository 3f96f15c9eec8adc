import { constants, type Stats } from "node:fs";
import { open, stat } from "node:fs/promises";
import { OpenWorkerError } from "@openworker/tools-sdk";

// Opening a FIFO for reading waits for a writer, in a libuv thread that even keeps
// process.exit from finishing. The stat() before open() refuses FIFOs and devices, and
// O_NONBLOCK makes the open return at once if the path was swapped for one in between
// (the fstat() after it then refuses it). Regular files ignore the flag; Windows has
// neither FIFOs nor the flag.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The size cap of every configuration file the host stack reads (servers.json, manifest.md, tools.json).
 *
 * @example
 * ```ts
 * CONFIG_FILE_MAX_BYTES; // 1048576 (1 MiB)
 * ```
 */
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

/**
 * The bytes of a configuration file and its text (UTF-8, a leading BOM removed).
 *
 * @example
 * ```ts
 * const { bytes, text }: ConfigFileContents = await readConfigFile("tools.json", { codePrefix: "BUNDLE_FILE" });
 * ```
 */
export interface ConfigFileContents {
  /** Exactly the bytes on disk: what an execution identity hashes. */
  readonly bytes: Uint8Array;
  readonly text: string;
}

/**
 * Which error codes a file's problems get, and its size cap.
 *
 * @example
 * ```ts
 * const options: ConfigFileOptions = { codePrefix: "SERVERS_FILE", maxBytes: 64 * 1024 };
 * ```
 */
export interface ConfigFileOptions {
  /** Prefix of the error codes: `"SERVERS_FILE"` gives `SERVERS_FILE_TOO_LARGE`, `SERVERS_FILE_NOT_FOUND`, … */
  readonly codePrefix: string;
  /** Size cap in bytes; defaults to {@link CONFIG_FILE_MAX_BYTES}. */
  readonly maxBytes?: number;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads a small UTF-8 configuration file without ever holding more than `maxBytes + 1`
 * bytes, and fails with a precise code instead of crashing or waiting: `<prefix>_NOT_FOUND`,
 * `<prefix>_IS_DIRECTORY`, `<prefix>_NOT_A_FILE` (a FIFO, device or socket: reading one
 * could block for ever or never end), `<prefix>_TOO_LARGE`, `<prefix>_NOT_UTF8`,
 * `<prefix>_UNREADABLE`. Shared by `loadServersFile` and the bundle resolver so all
 * three files behave alike.
 *
 * @example
 * ```ts
 * const { text } = await readConfigFile("servers.json", { codePrefix: "SERVERS_FILE" });
 * ```
 */
export async function readConfigFile(file: string, options: ConfigFileOptions): Promise<ConfigFileContents> {
  const { codePrefix } = options;
  const maxBytes = options.maxBytes ?? CONFIG_FILE_MAX_BYTES;
  const fail = (suffix: string, problem: string, cause?: unknown, details?: Record<string, unknown>): OpenWorkerError =>
    new OpenWorkerError(`${codePrefix}_${suffix}`, `${file}: ${problem}`, { cause, details: { file, ...details } });
  const checkKind = (stats: Stats): void => {
    if (stats.isDirectory()) throw fail("IS_DIRECTORY", "is a directory, expected a file");
    if (!stats.isFile()) {
      const kind = kindOf(stats);
      throw fail(
        "NOT_A_FILE",
        `is ${kind.words}, not a regular file; reading it could wait for ever or never end, so give the path of a regular file`,
        undefined,
        { kind: kind.code },
      );
    }
  };
  const unopenable = (cause: unknown): OpenWorkerError => {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return fail("NOT_FOUND", "file not found", cause);
    if (code === "EISDIR") return fail("IS_DIRECTORY", "is a directory, expected a file", cause);
    return fail("UNREADABLE", `cannot be opened (${code ?? (cause as Error).message})`, cause);
  };

  try {
    checkKind(await stat(file));
  } catch (error) {
    throw OpenWorkerError.isInstance(error) ? error : unopenable(error);
  }
  let handle;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (cause) {
    throw unopenable(cause);
  }
  try {
    const stats = await handle.stat();
    checkKind(stats);
    if (stats.size > maxBytes) {
      throw fail("TOO_LARGE", `is ${stats.size} bytes; the limit is ${maxBytes} bytes`);
    }
    // Read one byte past the cap: a file that grew after stat() is still refused.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) throw fail("TOO_LARGE", `is larger than the limit of ${maxBytes} bytes`);
    }
    const bytes = new Uint8Array(buffer.subarray(0, length));
    let text: string;
    try {
      text = UTF8.decode(bytes);
    } catch (cause) {
      throw fail("NOT_UTF8", "is not valid UTF-8 text; save it as UTF-8", cause);
    }
    return { bytes, text };
  } catch (error) {
    if (OpenWorkerError.isInstance(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EISDIR") throw fail("IS_DIRECTORY", "is a directory, expected a file", error);
    throw fail("UNREADABLE", `cannot be read (${code ?? (error as Error).message})`, error);
  } finally {
    await handle.close();
  }
}

function kindOf(stats: Stats): { code: string; words: string } {
  if (stats.isFIFO()) return { code: "fifo", words: "a FIFO (named pipe)" };
  if (stats.isCharacterDevice()) return { code: "character-device", words: "a character device" };
  if (stats.isBlockDevice()) return { code: "block-device", words: "a block device" };
  if (stats.isSocket()) return { code: "socket", words: "a socket" };
  return { code: "other", words: "an unknown kind of file" };
}
