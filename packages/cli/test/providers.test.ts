import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { PassThrough } from "node:stream";
import { chatCompletion, startFakeOpenAI } from "@openworker/model-openai/testing";
import { ToolRegistry } from "@openworker/registry";
import { codeTool } from "@openworker/tools-sdk";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { EXIT_CODES, runCli } from "../src/index.js";
import { tempDir, writeBundle } from "./helpers.js";

// `--provider` picks the model: the scripted one, the OpenAI-compatible provider, or an AI
// SDK provider package (anthropic, openai-responses), each run here against a local server
// speaking that vendor's streaming wire format.

const KEY = "sk-cli-canary-00112233445566778899";
const space = tempDir("providers");
afterAll(() => space.cleanup());
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function tools(): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(codeTool("demo.echo", "Echo.", { type: "object", properties: { text: { type: "string" } } }, (args) => ({ ok: args })));
  registry.register(codeTool(`demo.${"l".repeat(62)}`, "Long name.", { type: "object" }, (args) => ({ ok: args })));
  return registry;
}

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const stdout = Object.assign(new PassThrough(), { isTTY: false });
  const stderr = Object.assign(new PassThrough(), { isTTY: false });
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await runCli(tools(), { argv, programName: "host", env, stdout, stderr, stdin: new PassThrough() });
  return { code, stdout: out, stderr: err };
}

/** A local SSE endpoint on `route`: request `i` gets the events of `answers[i]`. */
async function sseEndpoint(route: string, answers: ReadonlyArray<ReadonlyArray<{ event: string; data: unknown }>>) {
  const bodies: Array<Record<string, unknown>> = [];
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res: ServerResponse) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const events = req.url === route ? answers[bodies.length] : undefined;
      bodies.push(JSON.parse(text || "{}") as Record<string, unknown>);
      headers.push(req.headers);
      if (events === undefined) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"type":"not_found_error","message":"no such route"}}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const { event, data } of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies, headers };
}

/** An Anthropic Messages stream: optional text, then optional tool_use blocks. */
function anthropicEvents(text: string | undefined, toolUses: ReadonlyArray<{ id: string; name: string; input: unknown }> = []) {
  const events: Array<{ event: string; data: unknown }> = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "claude-haiku-4-5",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 20, output_tokens: 1 },
        },
      },
    },
  ];
  let index = 0;
  if (text !== undefined) {
    events.push(
      { event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "text", text: "" } } },
      { event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text } } },
      { event: "content_block_stop", data: { type: "content_block_stop", index: index++ } },
    );
  }
  for (const use of toolUses) {
    events.push(
      {
        event: "content_block_start",
        data: { type: "content_block_start", index, content_block: { type: "tool_use", id: use.id, name: use.name, input: {} } },
      },
      {
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(use.input) } },
      },
      { event: "content_block_stop", data: { type: "content_block_stop", index: index++ } },
    );
  }
  events.push(
    {
      event: "message_delta",
      data: { type: "message_delta", delta: { stop_reason: toolUses.length > 0 ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 12 } },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  );
  return events;
}

/** An OpenAI Responses stream holding one text message. */
function responsesEvents(text: string) {
  const response = (status: string) => ({ id: "resp_1", object: "response", created_at: 1_767_225_600, status, model: "gpt-5-mini", output: [], usage: null });
  const item = { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] };
  return [
    { event: "response.created", data: { type: "response.created", sequence_number: 0, response: response("in_progress") } },
    { event: "response.output_item.added", data: { type: "response.output_item.added", sequence_number: 1, output_index: 0, item } },
    {
      event: "response.output_text.delta",
      data: { type: "response.output_text.delta", sequence_number: 2, item_id: "msg_1", output_index: 0, content_index: 0, delta: text, logprobs: [] },
    },
    {
      event: "response.output_item.done",
      data: {
        type: "response.output_item.done",
        sequence_number: 3,
        output_index: 0,
        item: { ...item, status: "completed", content: [{ type: "output_text", text, annotations: [] }] },
      },
    },
    {
      event: "response.completed",
      data: {
        type: "response.completed",
        sequence_number: 4,
        response: {
          ...response("completed"),
          usage: {
            input_tokens: 20,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 5,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 25,
          },
        },
      },
    },
  ];
}

function runArgs(name: string, ...model: string[]): string[] {
  const bundle = writeBundle(path.join(space.dir, name), '{"version":3,"tools":["demo.echo"]}');
  return [
    "run",
    "--bundle",
    bundle,
    "--message",
    "echo hi",
    "--approve",
    "yes",
    "--json",
    "--session-id",
    `ses_${name}`,
    "--workspace",
    space.dir,
    "--journal",
    path.join(space.dir, `${name}.db`),
    ...model,
  ];
}

describe("--provider: the model a command drives", () => {
  it("A3 E6 --provider anthropic --model --api-key-env: run takes a turn with a tool call through @ai-sdk/anthropic; the journal verifies; the key is in no output", async () => {
    const anthropic = await sseEndpoint("/v1/messages", [
      anthropicEvents(undefined, [{ id: "toolu_1", name: "demo__echo", input: { text: "hi" } }]),
      anthropicEvents("echoed hi"),
    ]);
    const model = ["--provider", "anthropic", "--model", "claude-haiku-4-5", "--api-key-env", "ANTHROPIC_KEY_FOR_TEST", "--base-url", anthropic.baseURL];
    const run = await cli(runArgs("anthropic", ...model), { ANTHROPIC_KEY_FOR_TEST: KEY });
    expect(run.code, run.stderr).toBe(EXIT_CODES.ok);
    expect(JSON.parse(run.stdout)).toMatchObject({ completed: true, text: "echoed hi", calls: [{ qualifiedName: "demo.echo", outcome: "succeeded" }] });
    expect(anthropic.headers[0]?.["x-api-key"]).toBe(KEY);
    expect(anthropic.bodies[0]).toMatchObject({ model: "claude-haiku-4-5", stream: true, tools: [{ name: "demo__echo" }] });
    const verify = await cli(["journal", "verify", "ses_anthropic", "--journal", path.join(space.dir, "anthropic.db")]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(EXIT_CODES.ok);
    const exported = await cli(["journal", "export", "ses_anthropic", "--journal", path.join(space.dir, "anthropic.db")]);
    expect(run.stdout + run.stderr + exported.stdout).not.toContain(KEY);
  });

  it("A3 --provider openai-responses drives the OpenAI Responses API through @ai-sdk/openai", async () => {
    const responses = await sseEndpoint("/v1/responses", [responsesEvents("hello from responses")]);
    const model = ["--provider", "openai-responses", "--model", "gpt-5-mini", "--api-key-env", "OPENAI_KEY_FOR_TEST", "--base-url", responses.baseURL];
    const run = await cli(runArgs("responses", ...model), { OPENAI_KEY_FOR_TEST: KEY });
    expect(run.code, run.stderr).toBe(EXIT_CODES.ok);
    expect(JSON.parse(run.stdout)).toMatchObject({ completed: true, text: "hello from responses" });
    expect(responses.headers[0]?.authorization).toBe(`Bearer ${KEY}`);
  });

  it("A3 --provider openai (or --base-url alone) drives an OpenAI-compatible endpoint through @openworker/model-openai", async () => {
    const endpoint = await startFakeOpenAI([() => chatCompletion({ content: "compatible" }), () => chatCompletion({ content: "compatible again" })]);
    closers.push(() => endpoint.close());
    const explicit = await cli(runArgs("compatible", "--provider", "openai", "--base-url", endpoint.baseURL, "--model", "qwen2.5:7b"));
    expect(JSON.parse(explicit.stdout)).toMatchObject({ completed: true, text: "compatible" });
    const implied = await cli(runArgs("implied", "--base-url", endpoint.baseURL, "--model", "qwen2.5:7b"));
    expect(JSON.parse(implied.stdout)).toMatchObject({ completed: true, text: "compatible again" });
    expect(endpoint.headers[0]?.authorization).toBe("Bearer not-needed");
  });

  it("N4 tools check with --provider anthropic flags an alias longer than 64 bytes without sending anything", async () => {
    const bundle = writeBundle(path.join(space.dir, "long"), JSON.stringify({ version: 3, tools: [`demo.${"l".repeat(62)}`] }));
    const checked = await cli(
      [
        "tools",
        "check",
        "--bundle",
        bundle,
        "--json",
        "--provider",
        "anthropic",
        "--model",
        "claude-haiku-4-5",
        "--api-key-env",
        "K",
        "--base-url",
        "http://127.0.0.1:9/v1",
      ],
      { K: KEY },
    );
    expect(checked.code).toBe(EXIT_CODES.failed);
    expect(JSON.parse(checked.stdout)).toMatchObject({ ok: false, problems: [{ code: "ALIAS_TOO_LONG_FOR_PROVIDER" }] });
  });

  it("E6 the AI SDK providers take the key only from the variable --api-key-env names: each missing piece is a usage error saying what to pass", async () => {
    const noModel = await cli(runArgs("no-model", "--provider", "anthropic"));
    expect(noModel.code).toBe(EXIT_CODES.usage);
    expect(noModel.stderr).toContain("--provider anthropic needs --model NAME (e.g. claude-sonnet-4-5)");
    const noKey = await cli(runArgs("no-key", "--provider", "openai-responses", "--model", "gpt-5-mini"), { OPENAI_API_KEY: KEY });
    expect(noKey.code).toBe(EXIT_CODES.usage);
    expect(noKey.stderr).toContain("--provider openai-responses needs --api-key-env NAME, the variable holding the OpenAI API key (e.g. OPENAI_API_KEY)");
    const unset = await cli(runArgs("unset", "--provider", "anthropic", "--model", "claude-haiku-4-5", "--api-key-env", "NOT_SET"));
    expect(JSON.parse(unset.stderr)).toMatchObject({
      error: { code: "CLI_API_KEY_MISSING", message: "--api-key-env NOT_SET: the variable NOT_SET is not set or empty" },
    });
    const unknown = await cli(runArgs("unknown", "--provider", "gemini", "--model", "x"));
    expect(unknown.code).toBe(EXIT_CODES.usage);
    expect(JSON.parse(unknown.stderr).error.message).toBe('--provider must be one of "scripted", "openai", "anthropic", "openai-responses", got "gemini"');
    const help = await cli(["--help"]);
    expect(help.stdout).toContain("--provider scripted|openai|anthropic|openai-responses");
  });
});
