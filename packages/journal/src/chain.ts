import { sha256Hex } from "@openworker/tools-sdk/validation";

/** The `prevHash` of a session's first record. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * The link of a record in its session's chain: hex SHA-256 of the previous record's
 * hash followed by the record's canonical JSON (`data`), exactly as stored.
 */
export function chainHash(prevHash: string, data: string): string {
  return sha256Hex(prevHash + data);
}
