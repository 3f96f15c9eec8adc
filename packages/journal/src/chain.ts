import { hash } from "node:crypto";

/** The `prevHash` of a session's first record. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * The link of a record in its session's chain: hex SHA-256 of the previous record's
 * hash followed by the record's canonical JSON (`data`), exactly as stored. `node:crypto`
 * directly (not the SDK's `sha256Hex`): the commit thread hashes too, and must not load
 * the SDK's validation entry (ajv) to do it.
 */
export function chainHash(prevHash: string, data: string): string {
  return hash("sha256", prevHash + data, "hex");
}
