import assert from "node:assert/strict";
import { test } from "node:test";
import { runTool } from "@openworker/tools-sdk/testing";
import { createDiagramTool, DiagramConsent } from "./diagram.js";

const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const diagrams = new Map([["alias", png]]);

test("without the user's consent the tool refuses and says how to get it", async () => {
  const result = await runTool(createDiagramTool(diagrams, new DiagramConsent()), { term: "alias" });
  assert.equal(result.error?.code, "CONSENT_REQUIRED");
});

test("with consent the diagram travels as an image, rechecked before delivery", async () => {
  const consent = new DiagramConsent();
  consent.grant("test-session", 60_000);
  const result = await runTool(createDiagramTool(diagrams, consent), { term: "alias" });
  assert.equal(result.outcome, "succeeded");
  assert.deepEqual(result.output?.json, { term: "alias", bytes: 8 });
  const [image] = result.output?.images ?? [];
  assert.equal(await image?.recheckConsent?.(), true);
  consent.revoke("test-session");
  assert.equal(await image?.recheckConsent?.(), false);
});

test("facts for the model say whether access is granted, and end-of-turn hooks drop it", () => {
  const consent = new DiagramConsent();
  const tool = createDiagramTool(diagrams, consent);
  consent.grant("s1", 60_000);
  assert.deepEqual(tool.modelContext?.("s1"), { diagramAccess: "granted" });
  tool.turnFinished?.("s1", true);
  assert.equal(consent.allowed("s1"), true);
  tool.turnFinished?.("s1", false);
  assert.equal(consent.allowed("s1"), false);
});
