import path from "node:path";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { REGISTRY_ERROR_CODES as CODES } from "./codes.js";
import type { ProviderSandboxPolicy } from "./provider.js";

const POLICY_FIELDS = ["read", "write", "network"];
const HOST = /^[A-Za-z0-9.*:[\]-]+$/;

/**
 * A4: a stdio provider's sandbox policy, checked field by field. Paths must be absolute:
 * a relative one would depend on the host's working folder (servers.json resolves its own
 * against the file's folder before this check).
 */
export function checkSandboxPolicy(raw: unknown, label: string): ProviderSandboxPolicy {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw policyError(label, "sandbox", "must be an object with read, write or network", raw);
  const fields = raw as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !POLICY_FIELDS.includes(key) && fields[key] !== undefined);
  if (unknown !== undefined) throw policyError(label, `sandbox.${unknown}`, `is not known (known: ${POLICY_FIELDS.join(", ")})`, fields[unknown]);
  const read = fields.read === undefined ? undefined : checkPaths(fields.read, label, "sandbox.read");
  const write = fields.write === undefined ? undefined : checkPaths(fields.write, label, "sandbox.write");
  const network = fields.network === undefined ? undefined : checkNetwork(fields.network, label);
  return Object.freeze({
    ...(read === undefined ? {} : { read }),
    ...(write === undefined ? {} : { write }),
    ...(network === undefined ? {} : { network }),
  });
}

/** servers.json: the policy's relative paths resolved against the file's folder; anything else is left for the check. */
export function locateSandboxPolicy(raw: unknown, folder: string): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const located: Record<string, unknown> = { ...raw };
  for (const field of ["read", "write"]) {
    const paths = located[field];
    if (!Array.isArray(paths)) continue;
    located[field] = paths.map((item: unknown) => (typeof item === "string" && item.length > 0 && !path.isAbsolute(item) ? path.resolve(folder, item) : item));
  }
  return located;
}

function checkPaths(raw: unknown, label: string, field: string): readonly string[] {
  if (!Array.isArray(raw)) throw policyError(label, field, "must be an array of absolute paths", raw);
  raw.forEach((item: unknown, index) => {
    if (typeof item !== "string" || item.length === 0 || item.includes("\0") || !path.isAbsolute(item)) {
      throw policyError(label, `${field}[${index}]`, `must be an absolute path${typeof item === "string" ? `, got ${JSON.stringify(item)}` : ""}`, item);
    }
  });
  return Object.freeze((raw as string[]).map((item) => path.resolve(item)));
}

function checkNetwork(raw: unknown, label: string): ProviderSandboxPolicy["network"] {
  if (raw === "none") return "none";
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw policyError(label, "sandbox.network", 'must be "none" or { "allow": [hosts] }', raw);
  const fields = raw as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => key !== "allow" && fields[key] !== undefined);
  if (unknown !== undefined) throw policyError(label, `sandbox.network.${unknown}`, "is not known (known: allow)", fields[unknown]);
  const allow = fields.allow;
  if (!Array.isArray(allow) || allow.length === 0)
    throw policyError(label, "sandbox.network.allow", 'must be a non-empty array of host names (or leave network out, or "none", for no network)', allow);
  allow.forEach((host: unknown, index) => {
    if (typeof host !== "string" || !HOST.test(host))
      throw policyError(label, `sandbox.network.allow[${index}]`, "must be a host name or address (host or host:port)", host);
  });
  return Object.freeze({ allow: Object.freeze([...(allow as string[])]) });
}

function policyError(label: string, field: string, problem: string, value: unknown): OpenWorkerError {
  const shown = typeof value === "string" || value === undefined ? "" : `, got ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}`;
  return new OpenWorkerError(CODES.providerInvalid, `${label}: field "${field}" ${problem}${shown}`, { details: { field } });
}
