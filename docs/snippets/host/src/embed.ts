import { type ApprovalPolicy, Runtime } from "@openworker/runtime";
import { ScriptedProvider } from "@openworker/runtime/testing";
import { createRegistry } from "./registry.js";

// Read-only tools run without asking; anything else goes to the approver.
const policy: ApprovalPolicy = {
  name: "my-host",
  classifications: { "glossary.lookup": "read_only", "notes.list_notes": "read_only" },
  rules: { read_only: "allow", external: "ask" },
};

// A scripted model keeps the example offline. A real host passes
// new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:11434/v1", model: "qwen2.5:7b" })
// (@openworker/model-openai), or fromAiSdk(anthropic("claude-sonnet-4-5"), { secrets: [key] })
// (@openworker/model-ai-sdk, with any @ai-sdk/* provider package).
const model = new ScriptedProvider([
  { toolCalls: [{ name: "glossary__lookup", arguments: { prefix: "alias" } }, { name: "notes__list_notes", arguments: {} }] },
  { text: "An alias is the name the model sees for a tool." },
]);

const runtime = await Runtime.openWithRegistry(createRegistry(), {
  journal: { path: ".openworker/journal.db" },
  models: [model],
  approver: (request) => ({ approved: false, who: "my-host", reason: `nobody is here to approve ${request.qualifiedName}` }),
});
try {
  const session = await runtime.openSession({ bundle: "coworker", policy });
  session.subscribe((event) => {
    if (event.type === "call_finished") console.log(`${event.qualifiedName}: ${event.outcome}`);
  });

  // A host-driven call goes through the same pipeline as the model's: validation, approval, journal, limits.
  const report = await session.callTool("glossary.lookup", { prefix: "bun" });
  console.log(JSON.stringify(report.json));

  const turn = await session.runTurn("What is an alias?");
  console.log(turn.completed ? turn.text : `turn stopped: ${turn.reason}`);
} finally {
  await runtime.close(); // ends MCP processes and verifies they are gone, then closes the journal
}
