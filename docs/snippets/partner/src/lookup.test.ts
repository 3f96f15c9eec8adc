import assert from "node:assert/strict";
import { test } from "node:test";
import { runTool } from "@openworker/tools-sdk/testing";
import { memoryGlossary } from "./glossary.js";
import { createLookupTool } from "./lookup.js";

const entries = [
  { term: "alias", definition: "The name a model sees: the qualified name with every dot replaced by __." },
  { term: "allowlist", definition: "A list of what is permitted; a coworker bundle's tools.json is its only one." },
];

test("finds the entries of a prefix and reports progress", async () => {
  const result = await runTool(createLookupTool(memoryGlossary(entries)), { prefix: "AL", limit: 1 });
  assert.equal(result.outcome, "succeeded");
  assert.deepEqual(result.output?.json, { entries: [entries[0]], total: 2 });
  assert.deepEqual(result.progressEvents, [{ message: 'searching the glossary for "AL"' }]);
});

test("an unknown prefix is a ToolError the model can act on", async () => {
  const result = await runTool(createLookupTool(memoryGlossary(entries)), { prefix: "zebra" });
  assert.equal(result.outcome, "failed");
  assert.equal(result.error?.code, "NO_MATCH");
});

test("arguments that break the schema never reach the tool", async () => {
  const result = await runTool(createLookupTool(memoryGlossary(entries)), { prefix: "" });
  assert.equal(result.error?.code, "ARGUMENTS_INVALID");
});

test("cancellation ends a slow search at once", async () => {
  const cancel = new AbortController();
  const pending = runTool(createLookupTool(memoryGlossary(entries, 60_000)), { prefix: "al" }, { signal: cancel.signal });
  cancel.abort();
  assert.equal((await pending).outcome, "cancelled");
});

test("a search slower than the time bound times out", async () => {
  const result = await runTool(createLookupTool(memoryGlossary(entries, 60_000)), { prefix: "al" }, { timeoutMs: 50 });
  assert.equal(result.outcome, "timed_out");
});
