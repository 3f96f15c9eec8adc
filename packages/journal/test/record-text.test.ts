import { canonicalJson } from "@openworker/tools-sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  approvalDecidedText,
  callFinishedText,
  callProgressText,
  callRequestedText,
  callStartedText,
  jsonString,
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

function same(record: Record<string, unknown>, written: string): void {
  expect(written).toBe(canonicalJson(record));
  // Text a reader can parse back to the same content.
  expect(canonicalJson(JSON.parse(written))).toBe(written);
}

describe("record text (the chain's input)", () => {
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
          sessionOpenedText(at, seq, sid, bundleDir, executionIdentity, identityInputs, workspace),
        );
      }),
      runs,
    );
    fc.assert(
      fc.property(envelope, fc.dictionary(text, text), text, text, ({ at, seq, sessionId }, catalogFingerprints, selectionFingerprint, turnId) => {
        same(
          { at, catalogFingerprints, kind: "turn_prepared", selectionFingerprint, seq, sessionId, turnId },
          turnPreparedText(at, seq, jsonString(sessionId), catalogFingerprints, selectionFingerprint, turnId),
        );
      }),
      runs,
    );
    fc.assert(
      fc.property(envelope, text, fc.jsonValue(), text, text, text, text, ({ at, seq, sessionId }, alias, args, argsDigest, callId, qualifiedName, turnId) => {
        same(
          { alias, args, argsDigest, at, callId, kind: "call_requested", qualifiedName, seq, sessionId, turnId },
          callRequestedText(at, seq, jsonString(sessionId), alias, canonicalJson(args), argsDigest, callId, qualifiedName, turnId),
        );
      }),
      runs,
    );
    fc.assert(
      fc.property(envelope, text, text, text, text, optionalText, text, optionalText, ({ at, seq, sessionId }, by, callId, decision, key, reason, scope, who) => {
        same(
          { at, by, callId, decision, key, kind: "approval_decided", reason, scope, seq, sessionId, who },
          approvalDecidedText(at, seq, jsonString(sessionId), by, callId, decision, key, reason, scope, who),
        );
      }),
      runs,
    );
    fc.assert(
      fc.property(envelope, text, value, ({ at, seq, sessionId }, callId, event) => {
        const sid = jsonString(sessionId);
        same({ at, callId, kind: "call_started", seq, sessionId }, callStartedText(at, seq, sid, callId));
        same({ at, callId, event, kind: "call_progress", seq, sessionId }, callProgressText(at, seq, sid, callId, event));
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
        text,
        value,
        ({ at, seq, sessionId }, breach, callId, code, imageDigests, message, outcome, result) => {
          same(
            { at, breach, callId, code, imageDigests, kind: "call_finished", message, outcome, result, seq, sessionId },
            callFinishedText(at, seq, jsonString(sessionId), breach, callId, code, imageDigests, message, outcome, result),
          );
        },
      ),
      runs,
    );
    fc.assert(
      fc.property(envelope, text, text, fc.boolean(), optionalText, text, ({ at, seq, sessionId }, reason, tool, completed, why, turnId) => {
        const sid = jsonString(sessionId);
        same({ at, kind: "revoked", reason, seq, sessionId, tool }, revokedText(at, seq, sid, reason, tool));
        same({ at, completed, kind: "turn_finished", reason: why, seq, sessionId, turnId }, turnFinishedText(at, seq, sid, completed, why, turnId));
        same({ at, kind: "session_closed", seq, sessionId }, sessionClosedText(at, seq, sid));
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
