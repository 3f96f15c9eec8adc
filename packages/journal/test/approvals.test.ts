import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { argumentsDigest, Journal, JOURNAL_ERRORS, type ApprovalKey } from "../src/index.js";
import { codeOf, temporaryFolder } from "./helpers.js";

let folder: ReturnType<typeof temporaryFolder>;
let journal: Journal;

const key: ApprovalKey = { executionIdentity: "owid3:one", qualifiedName: "acer.battery", schemaFingerprint: "sha256:schema-1" };

beforeEach(() => {
  folder = temporaryFolder();
  journal = Journal.open({ path: folder.file("journal.db") });
});

afterEach(() => {
  journal.close();
  folder.remove();
});

describe("approval store (A1, A2, M3)", () => {
  it("A2 a session-scope approval is found for the same identity, tool and schema, for any arguments", () => {
    journal.storeApproval(key, { scope: "session", by: "person", who: "ana" });
    expect(journal.findApproval(key)).toMatchObject({ ...key, scope: "session", by: "person", who: "ana" });
    expect(journal.findApproval({ ...key, argsDigest: argumentsDigest({ any: 1 }) })).toMatchObject({ scope: "session" });
  });

  it("M3 a different execution identity or a changed schema finds no approval: nothing is inherited", () => {
    journal.storeApproval(key, { scope: "session", by: "person" });
    expect(journal.findApproval({ ...key, executionIdentity: "owid3:two" })).toBeUndefined();
    expect(journal.findApproval({ ...key, schemaFingerprint: "sha256:schema-2" })).toBeUndefined();
    expect(journal.findApproval({ ...key, qualifiedName: "acer.fan" })).toBeUndefined();
  });

  it("A1 a once approval holds only for its exact arguments and is used up when consumed", () => {
    const digest = argumentsDigest({ path: "/a" });
    journal.storeApproval({ ...key, argsDigest: digest }, { scope: "once", by: "person" });
    expect(journal.findApproval(key)).toBeUndefined();
    expect(journal.findApproval({ ...key, argsDigest: argumentsDigest({ path: "/b" }) })).toBeUndefined();
    expect(journal.findApproval({ ...key, argsDigest: digest })).toMatchObject({ scope: "once", argsDigest: digest });
    expect(journal.consumeApproval({ ...key, argsDigest: digest })).toMatchObject({ scope: "once" });
    expect(journal.consumeApproval({ ...key, argsDigest: digest })).toBeUndefined();
  });

  it("A1 a session approval survives being consumed; a policy decision records its decider", () => {
    journal.storeApproval(key, { scope: "session", by: "policy", who: "read-only-ok" });
    expect(journal.consumeApproval(key)).toMatchObject({ by: "policy", who: "read-only-ok" });
    expect(journal.findApproval(key)).toBeDefined();
  });

  it("A2 approvals are durable and readable by a reader beside the writer", () => {
    journal.storeApproval(key, { scope: "session", by: "person" });
    const reader = Journal.open({ path: journal.path, readonly: true });
    try {
      expect(reader.findApproval(key)).toMatchObject({ scope: "session" });
    } finally {
      reader.close();
    }
    journal.close();
    journal = Journal.open({ path: folder.file("journal.db") });
    expect(journal.findApproval(key)).toBeDefined();
  });

  it("refuses a once approval without an arguments digest and malformed keys", async () => {
    expect(await codeOf(() => journal.storeApproval(key, { scope: "once", by: "person" }))).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    expect(await codeOf(() => journal.storeApproval({ ...key, executionIdentity: "" }, { scope: "session", by: "person" }))).toBe(
      JOURNAL_ERRORS.INVALID_RECORD,
    );
    expect(await codeOf(() => journal.storeApproval(key, { scope: "session", by: "admin" as never }))).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    expect(journal.findApproval(key)).toBeUndefined();
  });
});

describe("listing and revoking remembered approvals (A1, A2)", () => {
  it("A2 approvals() lists by identity and tool; revokeApprovals() forgets exactly the matches, and the next lookup finds nothing", async () => {
    const path = folder.file("list.db");
    const writer = Journal.open({ path });
    const key = (identity: string, tool: string): ApprovalKey => ({ executionIdentity: identity, qualifiedName: tool, schemaFingerprint: "sha256:s" });
    writer.storeApproval(key("owid3:a", "demo.pay"), { scope: "session", by: "person", who: "ana" });
    writer.storeApproval(key("owid3:a", "demo.read"), { scope: "session", by: "person" });
    writer.storeApproval(key("owid3:b", "demo.pay"), { scope: "session", by: "person" });
    expect(
      writer
        .approvals()
        .map((row) => `${row.executionIdentity} ${row.qualifiedName}`)
        .sort(),
    ).toEqual(["owid3:a demo.pay", "owid3:a demo.read", "owid3:b demo.pay"]);
    expect(writer.approvals({ qualifiedName: "demo.pay" })).toHaveLength(2);
    expect(writer.approvals({ executionIdentity: "owid3:a", qualifiedName: "demo.pay" })).toEqual([expect.objectContaining({ who: "ana", scope: "session" })]);
    expect(writer.revokeApprovals({ qualifiedName: "demo.pay" })).toBe(2);
    expect(writer.findApproval(key("owid3:a", "demo.pay"))).toBeUndefined();
    expect(writer.findApproval(key("owid3:a", "demo.read"))).toBeDefined();
    expect(await codeOf(() => writer.approvals({ qualifiedName: "" }))).toBe(JOURNAL_ERRORS.INVALID_RECORD);
    writer.close();
    const reader = Journal.open({ path, readonly: true });
    try {
      expect(reader.approvals()).toHaveLength(1);
      expect(await codeOf(() => reader.revokeApprovals({}))).toBe(JOURNAL_ERRORS.READ_ONLY);
    } finally {
      reader.close();
    }
  });
});
