import { canonicalJson } from "@openworker/tools-sdk";
import type { ApprovalDecider, CallOutcome } from "./records.js";

/**
 * The canonical JSON text of each record kind, written out field by field: byte for byte
 * what `canonicalJson(record)` gives (keys in sorted order, `undefined` fields left out),
 * which is what the chain hashes and what is stored. Only nested values a caller supplies
 * (arguments, results, progress events, identity inputs) go through `canonicalJson`.
 *
 * Why not `canonicalJson` of an object: on Node 20, `JSON.stringify` of a five-field
 * record costs about 600 ns and this template about 200 ns, and a governed call writes
 * four records. The property test in `record-text.test.ts` checks every kind against
 * `canonicalJson` on random values, so a key out of order cannot go unnoticed.
 *
 * Every function takes the envelope first: `at`, already as what JSON puts between its
 * quotes (see {@link jsonChars}: the journal's clock writes ISO text, which needs no
 * escaping), `seq`, and `sid`, the session id already as JSON text (see
 * {@link jsonString}; a session's is made once). A call id comes as JSON chars too, made
 * once per call, and so do the fields that repeat from call to call (a call's alias,
 * qualified name and turn id, an approval's key: see {@link RepeatedChars}). Fields the
 * writer holds to a fixed set of values (`decision`, `by`, `scope`, `outcome`, a
 * revocation's `reason`: plain ASCII words) and `argsDigest` (the writer refuses one that
 * is not the arguments' own `sha256:<hex>`) are written as they are. Every other string
 * is written between quotes the template holds, through {@link jsonChars}: no quoted
 * copy. A call writes four records: in the steady state two or three of their strings
 * are tested (the call id, a host call's own turn id, the approval's `who`), where
 * seventeen were.
 */

/**
 * Characters `JSON.stringify` escapes in a string: the quote, the backslash, and the
 * control characters U+0000–U+001F (matched on purpose); surrogates are escaped only when
 * lone, but every string holding one is sent to `JSON.stringify`.
 */
// oxlint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * `JSON.stringify(value)` for a string: most strings need no escaping, and quoting them
 * as they are is about four times faster than `JSON.stringify` on Node 20.
 */
export function jsonString(value: string): string {
  return `"${jsonChars(value)}"`;
}

/**
 * What `JSON.stringify(value)` puts between the quotes: `value` itself when nothing needs
 * escaping (no new string), for templates that write the quotes themselves.
 */
export function jsonChars(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value).slice(1, -1) : value;
}

/**
 * {@link jsonChars} of the value it was last given, kept: a field that repeats from call to
 * call (a tool's alias and qualified name, its approval key, a model turn's id) is tested
 * once rather than once per record (an approval key is about 150 characters). Another
 * value costs one string comparison more.
 */
export class RepeatedChars {
  private value: string | undefined;
  private chars = "";

  of(value: string): string {
    if (value !== this.value) {
      this.value = value;
      this.chars = jsonChars(value);
    }
    return this.chars;
  }
}

/** `,"key":"value"`, or nothing when the value is left out. */
function stringField(key: string, value: string | undefined): string {
  return value === undefined ? "" : `,"${key}":"${jsonChars(value)}"`;
}

/**
 * `,"key":<canonical JSON>`, or nothing when the value is `undefined` or has no JSON text
 * (a function): left out, as `JSON.stringify` leaves out such an object field.
 */
function jsonField(key: string, value: unknown): string {
  if (value === undefined) return "";
  const text = canonicalJson(value) as string | undefined;
  return text === undefined ? "" : `,"${key}":${text}`;
}

export function sessionOpenedText(
  at: string,
  seq: number,
  sid: string,
  bundleDir: string | undefined,
  executionIdentity: string,
  identityInputs: unknown,
  workspace: string,
): string {
  return (
    `{"at":"${at}"${stringField("bundleDir", bundleDir)},"executionIdentity":"${jsonChars(executionIdentity)}"` +
    `${jsonField("identityInputs", identityInputs)},"kind":"session_opened","seq":${seq},"sessionId":${sid},"workspace":"${jsonChars(workspace)}"}`
  );
}

export function turnPreparedText(
  at: string,
  seq: number,
  sid: string,
  catalogFingerprints: unknown,
  selectionFingerprint: string,
  turnId: string,
): string {
  return (
    `{"at":"${at}"${jsonField("catalogFingerprints", catalogFingerprints)},"kind":"turn_prepared",` +
    `"selectionFingerprint":"${jsonChars(selectionFingerprint)}","seq":${seq},"sessionId":${sid},"turnId":"${jsonChars(turnId)}"}`
  );
}

/** `argsText`: the arguments' canonical JSON, made once for their digest and for the record; `argsDigest` its digest. */
export function callRequestedText(
  at: string,
  seq: number,
  sid: string,
  alias: string,
  argsText: string,
  argsDigest: string,
  callId: string,
  qualifiedName: string,
  turnId: string,
): string {
  return (
    `{"alias":"${alias}","args":${argsText},"argsDigest":"${argsDigest}","at":"${at}",` +
    `"callId":"${callId}","kind":"call_requested","qualifiedName":"${qualifiedName}","seq":${seq},` +
    `"sessionId":${sid},"turnId":"${turnId}"}`
  );
}

export function approvalDecidedText(
  at: string,
  seq: number,
  sid: string,
  by: ApprovalDecider,
  callId: string,
  decision: "approved" | "denied",
  key: string,
  reason: string | undefined,
  scope: "once" | "session",
  who: string | undefined,
): string {
  return (
    `{"at":"${at}","by":"${by}","callId":"${callId}","decision":"${decision}",` +
    `"key":"${key}","kind":"approval_decided"${stringField("reason", reason)},"scope":"${scope}",` +
    `"seq":${seq},"sessionId":${sid}${stringField("who", who)}}`
  );
}

export function callStartedText(at: string, seq: number, sid: string, callId: string): string {
  return `{"at":"${at}","callId":"${callId}","kind":"call_started","seq":${seq},"sessionId":${sid}}`;
}

export function callProgressText(at: string, seq: number, sid: string, callId: string, event: unknown): string {
  return `{"at":"${at}","callId":"${callId}"${jsonField("event", event)},"kind":"call_progress","seq":${seq},"sessionId":${sid}}`;
}

export function callFinishedText(
  at: string,
  seq: number,
  sid: string,
  breach: unknown,
  callId: string,
  code: string | undefined,
  imageDigests: readonly string[] | undefined,
  message: string | undefined,
  outcome: CallOutcome,
  result: unknown,
): string {
  return (
    `{"at":"${at}"${jsonField("breach", breach)},"callId":"${callId}"${stringField("code", code)}` +
    `${jsonField("imageDigests", imageDigests)},"kind":"call_finished"${stringField("message", message)},` +
    `"outcome":"${outcome}"${jsonField("result", result)},"seq":${seq},"sessionId":${sid}}`
  );
}

export function revokedText(at: string, seq: number, sid: string, reason: "turn" | "cancel" | "close", tool: string): string {
  return `{"at":"${at}","kind":"revoked","reason":"${reason}","seq":${seq},"sessionId":${sid},"tool":"${jsonChars(tool)}"}`;
}

export function turnFinishedText(at: string, seq: number, sid: string, completed: boolean, reason: string | undefined, turnId: string): string {
  return (
    `{"at":"${at}","completed":${completed},"kind":"turn_finished"${stringField("reason", reason)},` +
    `"seq":${seq},"sessionId":${sid},"turnId":"${jsonChars(turnId)}"}`
  );
}

export function sessionClosedText(at: string, seq: number, sid: string): string {
  return `{"at":"${at}","kind":"session_closed","seq":${seq},"sessionId":${sid}}`;
}
