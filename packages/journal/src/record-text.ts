import { canonicalJson } from "@openworker/tools-sdk";

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
 * Every function takes the envelope first: `at`, `seq`, and `sid`, the session id
 * already as JSON text (see {@link jsonString}; a session's is made once). Strings are
 * written between quotes the template holds, through {@link jsonChars}: no quoted copy.
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
    `{"at":"${jsonChars(at)}"${stringField("bundleDir", bundleDir)},"executionIdentity":"${jsonChars(executionIdentity)}"` +
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
    `{"at":"${jsonChars(at)}"${jsonField("catalogFingerprints", catalogFingerprints)},"kind":"turn_prepared",` +
    `"selectionFingerprint":"${jsonChars(selectionFingerprint)}","seq":${seq},"sessionId":${sid},"turnId":"${jsonChars(turnId)}"}`
  );
}

/** `argsText`: the arguments' canonical JSON, made once for their digest and for the record. */
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
    `{"alias":"${jsonChars(alias)}","args":${argsText},"argsDigest":"${jsonChars(argsDigest)}","at":"${jsonChars(at)}",` +
    `"callId":"${jsonChars(callId)}","kind":"call_requested","qualifiedName":"${jsonChars(qualifiedName)}","seq":${seq},` +
    `"sessionId":${sid},"turnId":"${jsonChars(turnId)}"}`
  );
}

export function approvalDecidedText(
  at: string,
  seq: number,
  sid: string,
  by: string,
  callId: string,
  decision: string,
  key: string,
  reason: string | undefined,
  scope: string,
  who: string | undefined,
): string {
  return (
    `{"at":"${jsonChars(at)}","by":"${jsonChars(by)}","callId":"${jsonChars(callId)}","decision":"${jsonChars(decision)}",` +
    `"key":"${jsonChars(key)}","kind":"approval_decided"${stringField("reason", reason)},"scope":"${jsonChars(scope)}",` +
    `"seq":${seq},"sessionId":${sid}${stringField("who", who)}}`
  );
}

export function callStartedText(at: string, seq: number, sid: string, callId: string): string {
  return `{"at":"${jsonChars(at)}","callId":"${jsonChars(callId)}","kind":"call_started","seq":${seq},"sessionId":${sid}}`;
}

export function callProgressText(at: string, seq: number, sid: string, callId: string, event: unknown): string {
  return `{"at":"${jsonChars(at)}","callId":"${jsonChars(callId)}"${jsonField("event", event)},"kind":"call_progress","seq":${seq},"sessionId":${sid}}`;
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
  outcome: string,
  result: unknown,
): string {
  return (
    `{"at":"${jsonChars(at)}"${jsonField("breach", breach)},"callId":"${jsonChars(callId)}"${stringField("code", code)}` +
    `${jsonField("imageDigests", imageDigests)},"kind":"call_finished"${stringField("message", message)},` +
    `"outcome":"${jsonChars(outcome)}"${jsonField("result", result)},"seq":${seq},"sessionId":${sid}}`
  );
}

export function revokedText(at: string, seq: number, sid: string, reason: string, tool: string): string {
  return `{"at":"${jsonChars(at)}","kind":"revoked","reason":"${jsonChars(reason)}","seq":${seq},"sessionId":${sid},"tool":"${jsonChars(tool)}"}`;
}

export function turnFinishedText(at: string, seq: number, sid: string, completed: boolean, reason: string | undefined, turnId: string): string {
  return (
    `{"at":"${jsonChars(at)}","completed":${completed},"kind":"turn_finished"${stringField("reason", reason)},` +
    `"seq":${seq},"sessionId":${sid},"turnId":"${jsonChars(turnId)}"}`
  );
}

export function sessionClosedText(at: string, seq: number, sid: string): string {
  return `{"at":"${jsonChars(at)}","kind":"session_closed","seq":${seq},"sessionId":${sid}}`;
}
