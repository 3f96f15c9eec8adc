import { JOURNAL_ERRORS, journalError } from "../errors.js";

/**
 * What a reader says about a cell or record that is not what the journal writes (a frame body stored as a blob, a record whose content is not a JSON object, a head
 * row's open calls that are not JSON): the file was altered or damaged outside the journal.
 */
export function damagedError(sessionId: string, what: string) {
  return journalError(
    JOURNAL_ERRORS.DAMAGED,
    `session ${JSON.stringify(sessionId)}: ${what}; the journal file was altered or damaged: run verify() to find the first break`,
    { sessionId },
  );
}
/** How a SQLite cell that should be text or a number is described in a problem: "a blob", "NULL", "an integer". */
export function describeCell(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "string") return "text";
  if (typeof value === "bigint" || Number.isInteger(value)) return "an integer";
  if (typeof value === "number") return "a real number";
  if (value instanceof Uint8Array) return "a blob";
  return typeof value;
}
/** A record's content (canonical JSON of an object), or why it is not one. */
export function parseContent(data: string): Record<string, unknown> | string {
  let content: unknown;
  try {
    content = JSON.parse(data);
  } catch {
    return "torn record: its content is not JSON";
  }
  if (typeof content !== "object" || content === null || Array.isArray(content))
    return `altered record: its content is ${content === null ? "null" : Array.isArray(content) ? "an array" : typeof content}, not a JSON object`;
  return content as Record<string, unknown>;
}
/** A record's content for a reader: the object, or `JOURNAL_DAMAGED` naming the session and `seq`. */
export function readContent(data: string, sessionId: string, seq: number): Record<string, unknown> {
  const content = parseContent(data);
  if (typeof content === "string") throw damagedError(sessionId, `record ${seq}: ${content}`);
  return content;
}
