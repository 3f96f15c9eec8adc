import { hash } from "node:crypto";
import { canonicalJson } from "../canonical-json.js";

/**
 * Hex SHA-256 of a string or bytes.
 *
 * @example
 * ```ts
 * sha256Hex("abc").length; // 64
 * ```
 */
export function sha256Hex(data: string | Uint8Array): string {
  return hash("sha256", data, "hex");
}

/**
 * A deterministic fingerprint of a JSON Schema (`sha256:` + hex of its canonical JSON):
 * key order does not matter, any other change does. Approvals are bound to it (M3).
 *
 * @example
 * ```ts
 * schemaFingerprint({ type: "object" }) === schemaFingerprint({ "type": "object" }); // true
 * ```
 */
export function schemaFingerprint(schema: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(schema))}`;
}
