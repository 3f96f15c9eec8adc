import { CONFIG_FILE_MAX_BYTES } from "@openworker/registry/internal";
import { OpenWorkerError, utf8Bytes } from "@openworker/tools-sdk";
import { BUNDLE_ERROR_CODES as CODES } from "./codes.js";

/** Removes a leading UTF-8 byte order mark. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Refuses bundle text over 1 MiB, also when it did not come from a file. */
export function checkTextSize(text: string, file: string): void {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most texts never need counting.
  if (text.length * 3 <= CONFIG_FILE_MAX_BYTES) return;
  const bytes = utf8Bytes(text);
  if (bytes > CONFIG_FILE_MAX_BYTES) {
    throw new OpenWorkerError(CODES.fileTooLarge, `${file}: is ${bytes} bytes; the limit is ${CONFIG_FILE_MAX_BYTES} bytes`, { details: { file, bytes } });
  }
}
