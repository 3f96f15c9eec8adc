import { spawn } from "node:child_process";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { HarnessClient } from "@openworker/harness-client";
import { JsonRpcPeer, MAX_LINE_BYTES } from "@openworker/harness-client/internal";
import { FIXTURE_HOST, tempDir } from "./helpers.js";

const temp = tempDir("jsonrpc");
afterAll(() => temp.cleanup());

describe("the JSON-RPC peer under a hostile or careless other side", () => {
  it("a line over the message bound is dropped as it streams in and answered with an error; the next request is served", async () => {
    const child = spawn(process.execPath, [FIXTURE_HOST, "serve", "--stdio", "--journal", path.join(temp.dir, "long.db")], {
      stdio: ["pipe", "pipe", "ignore"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    // 20 MiB with no newline, in pieces, then the newline and a real request.
    const piece = "x".repeat(1024 * 1024);
    for (let index = 0; index < 20; index += 1) child.stdin.write(piece);
    child.stdin.write(`\n${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "models.list" })}\n`);
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const answers = output
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: unknown; error?: { message: string }; result?: unknown });
    expect(answers[0]).toMatchObject({ id: null, error: { message: expect.stringContaining(`limited to ${MAX_LINE_BYTES} bytes`) } });
    expect(answers.find((answer) => answer.id === 7)).toMatchObject({ result: [] });
  });

  it("a request without jsonrpc gets its own id back; a batch and a second request under an id in flight are refused", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let answers = "";
    output.setEncoding("utf8").on("data", (chunk: string) => (answers += chunk));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    new JsonRpcPeer(input, output, { request: async () => held.then(() => "done") });
    input.write(`${JSON.stringify({ id: 10, method: "models.list" })}\n`);
    input.write(`${JSON.stringify([{ jsonrpc: "2.0", id: 11, method: "models.list" }])}\n`);
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 12, method: "slow" })}\n`);
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 12, method: "slow" })}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await held;
    await new Promise((resolve) => setImmediate(resolve));
    const parsed = answers
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: unknown; error?: { message: string }; result?: unknown });
    expect(parsed[0]).toMatchObject({ id: 10, error: { code: -32600 } });
    expect(parsed[1]).toMatchObject({ id: null, error: { message: expect.stringContaining("batches are not supported") } });
    expect(parsed[2]).toMatchObject({ id: 12, error: { message: expect.stringContaining("still in flight") } });
    expect(parsed[3]).toMatchObject({ id: 12, result: "done" });
  });

  it("a peer that does not read what it is sent stops being read from until it drains (backpressure)", async () => {
    const input = new PassThrough();
    const output = new PassThrough({ highWaterMark: 1024 });
    new JsonRpcPeer(input, output, { request: async () => null });
    // Each invalid line is answered; nobody reads the answers.
    for (let index = 0; index < 200; index += 1) input.write("not json\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(input.isPaused()).toBe(true);
    output.resume(); // the other side reads again: input flows again
    await new Promise((resolve) => setImmediate(resolve));
    expect(input.isPaused()).toBe(false);
  });

  it("HarnessClient: a harness child killed while the host sends does not crash the host; requests reject with JSON_RPC_CLOSED", async () => {
    const harness = HarnessClient.spawn({ entry: FIXTURE_HOST, args: ["--journal", path.join(temp.dir, "killed.db")], stderr: "ignore" });
    await harness.models();
    harness.child.kill("SIGKILL");
    // One request a turn of the event loop, as a host keeps working: some are written into the dead pipe (EPIPE).
    // Each outcome is taken as it settles: a request made once the client saw the child die
    // rejects at once, and must not count as an unhandled rejection while the loop waits.
    const requests: Promise<PromiseSettledResult<unknown>>[] = [];
    for (let index = 0; index < 200; index += 1) {
      requests.push(
        harness.models().then(
          (value) => ({ status: "fulfilled" as const, value }),
          (reason: unknown) => ({ status: "rejected" as const, reason }),
        ),
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    const outcomes = await Promise.all(requests);
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") expect(outcome.reason).toMatchObject({ code: "JSON_RPC_CLOSED" });
    }
    expect(outcomes.some((outcome) => outcome.status === "rejected")).toBe(true);
    await expect(harness.models()).rejects.toMatchObject({ code: "JSON_RPC_CLOSED" });
  });
});
