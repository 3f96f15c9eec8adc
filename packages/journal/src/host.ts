import { hash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { JOURNAL_ERRORS, journalError } from "./errors.js";

/**
 * "The host executable's bytes" (A2) for a Node host: the SHA-256 of the host's bundled entry file (the one file a host build produces, with its
 * native tools linked in) plus the Node version that runs it.
 * @example
 * ```ts
 * const host = await hostExecutableDigest(process.argv[1]!);
 * // { executableBytesDigest: "sha256:…", nodeVersion: "v20.20.2" }
 * ```
 */
export async function hostExecutableDigest(entryFile: string): Promise<{ executableBytesDigest: string; nodeVersion: string }> {
  let bytes: Uint8Array;
  try {
    // A FIFO or a device would block the read for ever (or never end): only a file has bytes to pin.
    if (!(await stat(entryFile)).isFile()) throw new Error("it is not a regular file");
    bytes = await readFile(entryFile);
  } catch (cause) {
    throw journalError(
      JOURNAL_ERRORS.HOST_ENTRY_UNREADABLE,
      `host entry file ${JSON.stringify(entryFile)} cannot be read (${cause instanceof Error ? cause.message : String(cause)}); pass the path of the bundled host entry (e.g. process.argv[1])`,
      { path: entryFile },
      cause,
    );
  }
  return { executableBytesDigest: `sha256:${hash("sha256", bytes, "hex")}`, nodeVersion: process.version };
}
