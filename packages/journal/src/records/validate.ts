import { JOURNAL_ERRORS, journalError } from "../errors.js";

/** Where a record came from, for error messages (`callFinished of call "c1"`): written out only when a message is (`${site}`). */
export class RecordSite {
  constructor(
    private readonly method: string,
    private readonly of: "call" | "session" | "tool",
    private readonly id: unknown,
  ) {}

  toString(): string {
    return `${this.method} of ${this.of} ${JSON.stringify(this.id)}`;
  }
}
/** A site as text, or one written out when a message needs it. */
export type Site = string | RecordSite;

export function requireText(site: Site, field: string, value: unknown): string {
  return checked(site, field, value, "text") as string;
}

export function optionalText(site: Site, field: string, value: unknown): string | undefined {
  return value === undefined ? undefined : requireText(site, field, value);
}

export function requireOneOf<T extends string>(site: Site, field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value))
    throw journalError(
      JOURNAL_ERRORS.INVALID_RECORD,
      `${site}: field "${field}" must be one of ${allowed.map((item) => JSON.stringify(item)).join(", ")}, got ${describe(value)}`,
      { field, allowed },
    );
  return value as T;
}
/** The value kinds a field may be held to: when a value is one, and how a message names it. */
const KINDS = {
  text: [(value) => typeof value === "string" && value.length > 0, "a non-empty string"],
  boolean: [(value) => typeof value === "boolean", "a boolean"],
  count: [(value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 1, "a whole number from 1"],
  strings: [(value) => typeof value === "object" && value !== null && !Array.isArray(value), "an object of strings"],
  "strings?": [(value) => Array.isArray(value) && value.every((item) => typeof item === "string" && item.length > 0), "an array of non-empty strings"],
} as const satisfies Record<string, readonly [(value: unknown) => boolean, string]>;

function checked(site: Site, field: string, value: unknown, kind: keyof typeof KINDS): unknown {
  const [holds, what] = KINDS[kind];
  if (!holds(value)) throw journalError(JOURNAL_ERRORS.INVALID_RECORD, `${site}: field "${field}" must be ${what}, got ${describe(value)}`, { field });
  return value;
}

function requireStringMap(site: Site, field: string, value: unknown): Readonly<Record<string, string>> {
  for (const [key, item] of Object.entries(checked(site, field, value, "strings") as object)) {
    if (typeof item !== "string")
      throw journalError(JOURNAL_ERRORS.INVALID_RECORD, `${site}: field "${field}.${key}" must be a string, got ${describe(item)}`, {
        field: `${field}.${key}`,
      });
  }
  return value as Readonly<Record<string, string>>;
}

const DIGEST = /^(?:sha256:)?[0-9a-f]{64}$/;

/** Image digests only (T4): a lowercase hex SHA-256, optionally `sha256:`-prefixed. */
function requireImageDigests(site: Site, value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    throw journalError(JOURNAL_ERRORS.IMAGE_NOT_DIGEST, `${site}: field "imageDigests" must be an array of SHA-256 digests`, { field: "imageDigests" });
  }
  value.forEach((digest: unknown, index) => {
    if (typeof digest !== "string" || !DIGEST.test(digest)) {
      const shown = typeof digest === "string" ? `${digest.length} characters starting ${JSON.stringify(digest.slice(0, 16))}` : describe(digest);
      throw journalError(
        JOURNAL_ERRORS.IMAGE_NOT_DIGEST,
        `${site}: imageDigests[${index}] is not a SHA-256 digest (${shown}); the journal stores image digests only, never image bytes: pass the digest of each image`,
        { field: `imageDigests[${index}]` },
      );
    }
  });
  return value as readonly string[];
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length === 0 ? "an empty string" : JSON.stringify(value.slice(0, 40));
  return typeof value;
}
/** How a record field is checked: a kind of value, or the strings it may be. */
export type FieldRule = "text" | "text?" | "count" | "message" | "boolean" | "strings" | "strings?" | "json" | "digests" | readonly string[];

/** The fields of `input` the rules name, checked, in the rules' order. */
export function checkFields(site: Site, rules: Readonly<Record<string, FieldRule>>, input: object): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  const given = input as Readonly<Record<string, unknown>>;
  for (const [field, rule] of Object.entries(rules)) {
    const value = given[field];
    if (typeof rule !== "string") values[field] = requireOneOf(site, field, value, rule);
    else if (rule === "text?") values[field] = optionalText(site, field, value);
    else if (rule === "message") values[field] = typeof value === "string" ? value : undefined;
    else if (rule === "strings") values[field] = requireStringMap(site, field, value);
    else if (rule === "strings?") values[field] = value === undefined ? undefined : [...(checked(site, field, value, rule) as string[])];
    else if (rule === "digests") values[field] = requireImageDigests(site, value);
    else if (rule === "json") values[field] = value;
    else values[field] = checked(site, field, value, rule);
  }
  return values;
}
