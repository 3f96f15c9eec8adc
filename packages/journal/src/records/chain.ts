import { hash } from "node:crypto";

/** The `prevHash` of a session's first record. */
export const GENESIS_HASH = "0".repeat(64);

/** A record's link in its session's chain. */
export function chainHash(prevHash: string, data: string): string {
  return hash("sha256", prevHash + data, "hex");
}
/** The length of a frame line's hash (hex SHA-256), before its space and record. */
export const HASH_LENGTH = 64;
