import { canonicalJson } from "@openworker/tools-sdk";
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

/** The canonical text of a record's content: what is stored and what is hashed. */
export function recordData(content: object): string {
  return canonicalJson(content);
}
