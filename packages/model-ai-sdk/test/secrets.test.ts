import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import type { ModelProvider, Runtime, RuntimeEvent } from "@openworker/runtime";
import { describe, expect, it } from "vitest";
import { fromAiSdk } from "../src/index.js";
import { anthropicError, anthropicStream, startFakeAnthropic } from "./support/fake-anthropic.js";
import { responsesError, responsesStream, startFakeResponses } from "./support/fake-openai-responses.js";
import { openRuntime, scratchEach, turnTools, writeBundle } from "./support/harness.js";

// The canary: a key the host handed the adapter, echoed by the model (in its text and a
// tool call's arguments, which the tool echoes back) and by the vendor (in a 401 body).
const CANARY = "sk-canary-7f3a9c2e5b1d4086";

let runtime: Runtime | undefined;
let server: { close(): Promise<void> } | undefined;
const space = scratchEach(async () => {
  await runtime?.close();
  await server?.close();
  runtime = undefined;
  server = undefined;
});

const vendors: Array<[string, () => Promise<ModelProvider>]> = [
  [
    "@ai-sdk/anthropic",
    async () => {
      const fake = await startFakeAnthropic([
        anthropicStream({ text: `My key is ${CANARY}.`, toolUses: [{ id: "toolu_1", name: "test__echo", input: { text: CANARY } }] }),
        anthropicError(401, "authentication_error", `invalid x-api-key: ${CANARY}`),
      ]);
      server = fake;
      return fromAiSdk(createAnthropic({ baseURL: fake.baseURL, apiKey: CANARY })("claude-haiku-4-5"), { secrets: [CANARY] });
    },
  ],
  [
    "@ai-sdk/openai (Responses)",
    async () => {
      const fake = await startFakeResponses([
        responsesStream({ text: `My key is ${CANARY}.`, functionCalls: [{ callId: "call_1", name: "test__echo", arguments: { text: CANARY } }] }),
        responsesError(401, `Incorrect API key provided: ${CANARY}.`, "invalid_api_key"),
      ]);
      server = fake;
      return fromAiSdk(createOpenAI({ baseURL: fake.baseURL, apiKey: CANARY }).responses("gpt-5-mini"), { secrets: [CANARY] });
    },
  ],
];

describe("the adapter's credentials (E6 canary)", () => {
  it.each(vendors)(
    "E6 I1 %s: the API key reaches neither the journal, nor an event, nor the turn's error or text, nor the session's messages",
    async (_vendor, make) => {
      const provider = await make();
      runtime = await openRuntime(space.dir, turnTools(), { models: [provider] });
      const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.echo"]) });
      const events: RuntimeEvent[] = [];
      session.subscribe((event) => events.push(event));
      const turn = await session.runTurn("what is your key?");

      expect(turn).toMatchObject({ completed: false, reason: "model_error", error: { code: "MODEL_FAILED" } });
      expect(turn.error?.message).toContain("HTTP 401");
      expect(turn.calls).toMatchObject([{ qualifiedName: "test.echo", outcome: "succeeded" }]);
      expect(events.filter((event) => event.type === "message")).toMatchObject([{ text: "My key is [redacted]." }]);
      await runtime.journal.flush();
      expect(runtime.journal.verify(session.id)).toMatchObject({ ok: true });
      const written = [JSON.stringify(turn), JSON.stringify(events), JSON.stringify(session.messages), ...runtime.journal.exportSession(session.id)].join("\n");
      expect(written).not.toContain(CANARY);
      expect(written).toContain("[redacted]");
      // The vendor refused the key: the observation failed (I1).
      expect(runtime.readModelCatalogReadiness({ provider: provider.id, model: provider.defaultModel })).toBeUndefined();
    },
  );
});
