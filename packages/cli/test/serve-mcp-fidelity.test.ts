import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
// The MCP SDK's own client, as any MCP client would use it.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURES, runEntry, tempDir, withHttpServer, writeBundle } from "./helpers.js";

const temp = tempDir("mcp-fidelity");
afterAll(() => temp.cleanup());

/** Natives `fixture.snapshot` (consent holds) and `fixture.revoked` (consent withdrawn), each answering an image. */
const IMAGE_HOST = path.join(FIXTURES, "image-host.mjs");
/** The conformance fixture's audio clip, as it sends it. */
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

type Block = { type: string; text?: string; data?: string; mimeType?: string; resource?: { uri: string; text?: string } };
type Result = { isError?: boolean; content: Block[]; structuredContent?: Record<string, unknown> };

/** `serve --mcp` arguments for a v1 bundle of the provider's every tool (`grown` too, once published), or a v3 bundle of the natives. */
function setup(name: string, serves: "provider" | "natives"): string[] {
  const servers = path.join(temp.dir, `${name}-servers.json`);
  writeFileSync(
    servers,
    JSON.stringify({ servers: { conf: { transport: "stdio", command: process.execPath, args: [path.join(FIXTURES, "conformance-server.mjs")] } } }),
  );
  const selection = serves === "provider" ? { version: 1, mcpServers: ["conf"] } : { version: 3, tools: ["fixture.snapshot", "fixture.revoked"] };
  const bundle = writeBundle(path.join(temp.dir, `${name}-bundle`), JSON.stringify(selection));
  return ["--bundle", bundle, "--servers", servers, "--approve", "yes", "--journal", path.join(temp.dir, `${name}.db`)];
}

/** What one client sees of a provider's tools: listing, content of every kind, progress, a list change. */
async function seeProvider(client: Client): Promise<void> {
  let listChanges = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (listChanges += 1));
  const { tools } = await client.listTools();
  // Published metadata, as the provider published it; the qualified name in _meta.
  expect(tools.find((tool) => tool.name === "conf__forecast")).toEqual({
    name: "conf__forecast",
    title: "Weather forecast",
    description: "The forecast for a city.",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    outputSchema: { type: "object", properties: { city: { type: "string" }, celsius: { type: "number" } }, required: ["city", "celsius"] },
    annotations: { readOnlyHint: true, openWorldHint: false },
    icons: [{ src: `data:image/png;base64,${PNG}`, mimeType: "image/png", sizes: ["1x1"] }],
    _meta: { "openworker/qualifiedName": "conf.forecast" },
  });
  // Structured output is structuredContent (the SDK client checks it against the output schema).
  const forecast = (await client.callTool({ name: "conf__forecast", arguments: { city: "Oslo" } })) as Result;
  expect(forecast.structuredContent).toEqual({ city: "Oslo", celsius: 21.5 });
  // Content without structured output: every block as the provider sent it, and no structuredContent.
  const mixed = (await client.callTool({ name: "conf__test_multiple_content_types", arguments: {} })) as Result;
  expect(mixed.content).toEqual([
    { type: "text", text: "Multiple content types test:" },
    { type: "image", mimeType: "image/png", data: PNG },
    { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: '{"test":"data","value":123}' } },
  ]);
  expect(mixed.structuredContent).toBeUndefined();
  // M7: audio reaches the client as the provider sent it (an attachment, as images are: T4).
  const audio = (await client.callTool({ name: "conf__test_audio_content", arguments: {} })) as Result;
  expect(audio.content).toEqual([{ type: "audio", mimeType: "audio/wav", data: WAV }]);

  // E2: the provider's progress reaches the client's token. MCP progress must grow: its first figure, 0, is sent as one step.
  expect(await progressOf(client, "conf__test_tool_with_progress")).toEqual([1, 50, 100]);

  // M3: the provider publishes a new tool; the client is told, and the new tool is served.
  await client.callTool({ name: "conf__grow", arguments: {} });
  for (let waited = 0; listChanges === 0 && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(listChanges).toBeGreaterThan(0);
  expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("conf__grown");
  const grown = (await client.callTool({ name: "conf__grown", arguments: {} })) as Result;
  expect(grown.content).toEqual([{ type: "text", text: "hello from grown" }]);
}

/** What one client sees of native tools: no made-up title, images only after their consent recheck, progress. */
async function seeNatives(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  // A native tool's descriptor has no title: none is made up.
  const snapshot = tools.find((tool) => tool.name === "fixture__snapshot");
  expect(snapshot?.title).toBeUndefined();
  expect(snapshot?._meta).toEqual({ "openworker/qualifiedName": "fixture.snapshot" });

  // T4: a native image reaches the client only when its consent holds right before delivery.
  const shown = (await client.callTool({ name: "fixture__snapshot", arguments: {} })) as Result;
  expect(shown.structuredContent).toEqual({ width: 1, height: 1 });
  expect(shown.content.find((block) => block.type === "image")).toEqual({ type: "image", mimeType: "image/png", data: PNG });
  const withheld = (await client.callTool({ name: "fixture__revoked", arguments: {} })) as Result;
  expect(withheld.content.some((block) => block.type === "image")).toBe(false);
  expect(withheld.content.map((block) => block.text).join("\n")).toContain(
    "[image withheld: the user's consent could not be confirmed right before delivery (the screen)]",
  );

  // E2: a native tool's progress reaches the client's token. Both events precede the answer
  // on the wire (a test below reads it), but the SDK clients dispatch notifications a
  // microtask late and retire the token when the answer is read, so an event read in the
  // same chunk as the answer is dropped on their side
  // (https://github.com/modelcontextprotocol/typescript-sdk/issues/2580): on a loaded
  // machine all of them can be. What arrives arrives in order, figures intact.
  const figures = await progressOf(client, "fixture__snapshot");
  expect(figures).toEqual([1, 2].slice(0, figures.length));
}

async function progressOf(client: Client, name: string): Promise<number[]> {
  const progress: number[] = [];
  await client.callTool({ name, arguments: {} }, undefined, { onprogress: (update) => void progress.push(update.progress) });
  return progress;
}

/** The raw lines `serve --mcp` writes on stdout for one progress-tracked call of `name`, up to its answer. */
async function wireOfCall(args: readonly string[], name: string): Promise<string[]> {
  const child = spawn(process.execPath, [IMAGE_HOST, "serve", "--mcp", ...args], { stdio: ["pipe", "pipe", "ignore"] });
  const seen: string[] = [];
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  try {
    return await new Promise<string[]>((resolve, reject) => {
      let text = "";
      child.once("exit", (code) => reject(new Error(`serve --mcp exited (${code}) before answering`)));
      child.stdout.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n")) {
          const message = JSON.parse(text.slice(0, end)) as { id?: number; method?: string; params?: { progress?: number } };
          text = text.slice(end + 1);
          if (message.id === 1) {
            send({ jsonrpc: "2.0", method: "notifications/initialized" });
            send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: {}, _meta: { progressToken: "wire" } } });
          } else if (message.id === 2) resolve([...seen, "answer"]);
          else if (message.method === "notifications/progress") seen.push(`progress ${message.params?.progress}`);
        }
      });
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "wire", version: "1" } },
      });
    });
  } finally {
    child.kill();
  }
}

/** The MCP inspector's CLI (`mcp-inspector --cli`), as a developer runs it against a server. */
const inspectorPackage = createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector/package.json");
const INSPECTOR = path.join(
  path.dirname(inspectorPackage),
  (JSON.parse(readFileSync(inspectorPackage, "utf8")) as { bin: Record<string, string> }).bin["mcp-inspector"]!,
);

/** What the inspector's CLI prints (JSON) for `target` and its method arguments. */
async function inspect(target: readonly string[], method: readonly string[]): Promise<{ tools?: Record<string, unknown>[] } & Result> {
  const ran = await runEntry(INSPECTOR, ["--cli", ...target, ...method], { env: { ...process.env, HOME: temp.dir, NO_COLOR: "1" } });
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout);
}

/** The inspector sees, over one transport, what the SDK clients see: metadata and every content kind. */
async function inspectProvider(target: readonly string[]): Promise<Record<string, unknown>[]> {
  const { tools } = await inspect(target, ["--method", "tools/list"]);
  expect(tools?.find((tool) => tool.name === "conf__forecast")).toMatchObject({
    title: "Weather forecast",
    outputSchema: { type: "object", properties: { city: { type: "string" }, celsius: { type: "number" } }, required: ["city", "celsius"] },
    annotations: { readOnlyHint: true, openWorldHint: false },
    icons: [{ src: `data:image/png;base64,${PNG}`, mimeType: "image/png", sizes: ["1x1"] }],
  });
  const call = (name: string, ...args: string[]) =>
    inspect(target, ["--method", "tools/call", "--tool-name", name, ...(args.length ? ["--tool-arg", ...args] : [])]);
  expect((await call("conf__forecast", "city=Oslo")).structuredContent).toEqual({ city: "Oslo", celsius: 21.5 });
  expect((await call("conf__test_audio_content")).content).toEqual([{ type: "audio", mimeType: "audio/wav", data: WAV }]);
  expect((await call("conf__test_image_content")).content).toEqual([{ type: "image", mimeType: "image/png", data: PNG }]);
  expect((await call("conf__test_multiple_content_types")).content.map((block) => block.type)).toEqual(["text", "image", "resource"]);
  return tools!;
}

describe("serve --mcp serves tools as they are published", () => {
  it("M11 the MCP inspector's CLI sees the same metadata and content over stdio and HTTP", async () => {
    const overStdio = await inspectProvider([process.execPath, IMAGE_HOST, "serve", "--mcp", ...setup("inspector-stdio", "provider")]);
    await withHttpServer(IMAGE_HOST, setup("inspector-http", "provider"), async ({ port }) => {
      expect(await inspectProvider([`http://127.0.0.1:${port}/mcp`])).toEqual(overStdio);
    });
  });

  it("M11 E2 over stdio every progress event of a native tool reported back to back is written before the call's answer", async () => {
    for (let round = 0; round < 5; round++) {
      expect(await wireOfCall(setup(`wire-${round}`, "natives"), "fixture__snapshot")).toEqual(["progress 1", "progress 2", "answer"]);
    }
  });

  for (const serves of ["provider", "natives"] as const) {
    const see = serves === "provider" ? seeProvider : seeNatives;
    it(`M11 T4 E2 M3 over stdio, ${serves}: metadata, content, images only after the consent recheck, progress${serves === "provider" ? ", list changes" : ""}`, async () => {
      const client = new Client({ name: "fidelity-client", version: "1.0.0" });
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args: [IMAGE_HOST, "serve", "--mcp", ...setup(`stdio-${serves}`, serves)], stderr: "ignore" }),
      );
      try {
        await see(client);
      } finally {
        await client.close();
      }
      // T4: the bytes of images and audio the client was given never reach the journal.
      const journalFiles = readdirSync(temp.dir).filter((name) => name.startsWith(`stdio-${serves}.db`));
      expect(journalFiles).toContain(`stdio-${serves}.db`);
      for (const file of journalFiles) {
        const stored = readFileSync(path.join(temp.dir, file), "latin1");
        for (const bytes of [PNG, WAV]) expect(stored, file).not.toContain(bytes);
      }
    });

    it(`M11 T4 E2 M3 over HTTP, ${serves}: the same as over stdio`, async () => {
      await withHttpServer(IMAGE_HOST, setup(`http-${serves}`, serves), async ({ port }) => {
        const client = new Client({ name: "fidelity-client", version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
        try {
          await see(client);
        } finally {
          await client.close();
        }
      });
    });
  }

  it("M11 E2 M3 over HTTP to a 2026-07-28 client: the same metadata, content and progress, and list changes on its subscription", async () => {
    await withHttpServer(IMAGE_HOST, setup("http-modern", "provider"), async ({ port }) => {
      const client = new ModernClient({ name: "fidelity-client", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
      await client.connect(new ModernHttpTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      try {
        const { tools } = await client.listTools();
        expect(tools.find((tool) => tool.name === "conf__forecast")).toMatchObject({
          title: "Weather forecast",
          annotations: { readOnlyHint: true },
          outputSchema: { required: ["city", "celsius"] },
        });
        const mixed = (await client.callTool({ name: "conf__test_multiple_content_types", arguments: {} })) as Result;
        expect(mixed.content.map((block) => block.type)).toEqual(["text", "image", "resource"]);
        expect(mixed.content[1]?.data).toBe(PNG);
        const progress: number[] = [];
        await client.callTool({ name: "conf__test_tool_with_progress", arguments: {} }, { onprogress: (update) => void progress.push(update.progress) });
        expect(progress).toEqual([1, 50, 100]);
        let listChanges = 0;
        client.setNotificationHandler("notifications/tools/list_changed", () => void (listChanges += 1));
        const subscription = await client.listen({ toolsListChanged: true });
        await client.callTool({ name: "conf__grow", arguments: {} });
        for (let waited = 0; listChanges === 0 && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(listChanges).toBeGreaterThan(0);
        expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("conf__grown");
        await subscription.close();
      } finally {
        await client.close();
      }
    });
  });
});
