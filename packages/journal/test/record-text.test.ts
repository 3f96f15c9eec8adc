import { canonicalJson } from "@openworker/tools-sdk";
import { CALL_OUTCOMES } from "../src/records.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  approvalDecidedText,
  callFinishedText,
  callProgressText,
  callRequestedText,
  callStartedText,
  jsonChars,
  jsonString,
  RepeatedChars,
  revokedText,
  sessionClosedText,
  sessionOpenedText,
  turnFinishedText,
  turnPreparedText,
} from "../src/record-text.js";

// Every record's text is what the chain hashes (A3's chain, verify()): it must be exactly
// canonicalJson of the record, whatever the values, or a record written today would not
// verify against the same content tomorrow.

/** Any string, lone surrogates, quotes, control characters and non-ASCII included. */
const text = fc.oneof(fc.string({ unit: "binary" }), fc.string(), fc.constantFrom("", '"', "\\", "\u2028", "\ud800", "a\u0000b", "é"));
const optionalText = fc.option(text, { nil: undefined });
/** Any JSON value, or left out. */
const value = fc.option(fc.jsonValue(), { nil: undefined });
const envelope = fc.record({ at: text, seq: fc.integer({ min: 1, max: 2 ** 40 }), sessionId: text });
// What the writer holds to a fixed set (the templates write these as they are), and the
// arguments' digest (the writer refuses any other).
const decider = fc.constantFrom("person" as const, "policy" as const, "bypass" as const);
const decision = fc.constantFrom("approved" as const, "denied" as const);
const scope = fc.constantFrom("once" as const, "session" as const);
const outcome = fc.constantFrom(...CALL_OUTCOMES);
const revokeReason = fc.constantFrom("turn" as const, "cancel" as const, "close" as const);
const digest = fc.stringMatching(/^sha256:[0-9a-f]{64}$/);

function same(record: Record<string, unknown>, written: string): void {
  expect(written).toBe(canonicalJson(record));
  // Text a reader can parse back to the same content. Node 24's V8 may read an escaped
  // object key (`"\\t"`) back as `"\\"` once it has parsed a `"\\\\"` key (an open V8
  // bug, nodejs/node#63785): the text above is right, that parse is not to be trusted.
  if (!hasEscapedKey(written)) expect(canonicalJson(JSON.parse(written))).toBe(written);
}

/** Whether JSON text has an object key with an escape in it (string tokens, in order). */
function hasEscapedKey(json: string): boolean {
  for (const [token, colon] of json.matchAll(/"(?:[^"\\]|\\.)*"(\s*:)?/g)) if (colon !== undefined && token.includes("\\")) return true;
  return false;
}

describe("record text (the chain's input)", () => {
  it("A3 RepeatedChars gives jsonChars of each value, repeated or not, in any order", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(text, fc.constantFrom("a", '"q"', "a"))), (values) => {
        const repeated = new RepeatedChars();
        return values.every((value) => repeated.of(value) === JSON.stringify(value).slice(1, -1));
      }),
      { numRuns: 500 },
    );
  });

  it("jsonString is JSON.stringify for every string", () => {
    fc.assert(fc.property(text, (value) => jsonString(value) === JSON.stringify(value)), { numRuns: 2000 });
  });

  it("A3: every record kind's text is canonicalJson of the record, byte for byte", () => {
    const runs = { numRuns: 300 };
    fc.assert(
      fc.property(envelope, optionalText, text, value, text, ({ at, seq, sessionId }, bundleDir, executionIdentity, identityInputs, workspace) => {
        const sid = jsonString(sessionId);
        same(
          { at, bundleDir, executionIdentity, identityInputs, kind: "session_opened", seq, sessionId, workspace },
          sessionOpenedText(jsonChars(at), seq, sid, bundleDir, executionIdentity, identityInputs, workspace),
        );
      }),
      runs,
    );
    fc.assert(
      fc.property(envelope, fc.dictionary(text, text), text, text, ({ at, seq, sessionId }, catalogFingerprints, selectionFingerprint, turnId) => {
        same(
          { at, catalogFingerprints, kind: "turn_prepared", selectionFingerprint, seq, sessionId, turnId },
          turnPreparedText(jsonChars(at), seq, jsonString(sessionId), catalogFingerprints, selectionFingerprint, turnId),
        );
      }),
      runs,
    );
    fc.assert(
      fc.property(envelope, text, fc.jsonValue(), digest, text, text, text, ({ at, seq, sessionId }, alias, args, argsDigest, callId, qualifiedName, turnId) => {
        same(
          { alias, args, argsDigest, at, callId, kind: "call_requested", qualifiedName, seq, sessionId, turnId },
          callRequestedText(jsonChars(at), seq, jsonString(sessionId), jsonChars(alias), canonicalJson(args), argsDigest, jsonChars(callId), jsonChars(qualifiedName), jsonChars(turnId)),
        );
      }),
      runs,
    );
    fc.assert(
      fc.property(envelope, decider, text, decision, text, optionalText, scope, optionalText, ({ at, seq, sessionId }, by, callId, decision, key, reason, scope, who) => {
        same(
          { at, by, callId, decision, key, kind: "approval_decided", reason, scope, seq, sessionId, who },
          approvalDecidedText(jsonChars(at), seq, jsonString(sessionId), by, jsonChars(callId), decision, jsonChars(key), reason, scope, who),
        );
      }),
      runs,
    );
    fc.assert(
      fc.property(envelope, text, value, ({ at, seq, sessionId }, callId, event) => {
        const sid = jsonString(sessionId);
        same({ at, callId, kind: "call_started", seq, sessionId }, callStartedText(jsonChars(at), seq, sid, jsonChars(callId)));
        same({ at, callId, event, kind: "call_progress", seq, sessionId }, callProgressText(jsonChars(at), seq, sid, jsonChars(callId), event));
      }),
      runs,
    );
    fc.assert(
      fc.property(
        envelope,
        value,
        text,
        optionalText,
        fc.option(fc.array(text), { nil: undefined }),
        optionalText,
        outcome,
        value,
        ({ at, seq, sessionId }, breach, callId, code, imageDigests, message, outcome, result) => {
          same(
            { at, breach, callId, code, imageDigests, kind: "call_finished", message, outcome, result, seq, sessionId },
            callFinishedText(jsonChars(at), seq, jsonString(sessionId), breach, jsonChars(callId), code, imageDigests, message, outcome, result),
          );
        },
      ),
      runs,
    );
    fc.assert(
      fc.property(envelope, revokeReason, text, fc.boolean(), optionalText, text, ({ at, seq, sessionId }, reason, tool, completed, why, turnId) => {
        const sid = jsonString(sessionId);
        same({ at, kind: "revoked", reason, seq, sessionId, tool }, revokedText(jsonChars(at), seq, sid, reason, tool));
        same({ at, completed, kind: "turn_finished", reason: why, seq, sessionId, turnId }, turnFinishedText(jsonChars(at), seq, sid, completed, why, turnId));
        same({ at, kind: "session_closed", seq, sessionId }, sessionClosedText(jsonChars(at), seq, sid));
      }),
      runs,
    );
  });

  it("a nested value JSON cannot hold is refused as JSON.stringify refuses it", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => callFinishedText("t", 1, '"s"', undefined, "c", undefined, undefined, undefined, "succeeded", { big: 1n })).toThrow(TypeError);
    expect(() => callProgressText("t", 1, '"s"', "c", cyclic)).toThrow();
  });
});
