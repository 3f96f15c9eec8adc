import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { runTool } from "@openworker/tools-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebSearch, register } from "../src/index.js";

let server: Server;
let baseUrl: string;
const queries: string[] = [];

beforeAll(async () => {
  // A local service speaking SearXNG's JSON search API.
  server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/search" || url.searchParams.get("format") !== "json") {
      response.writeHead(404).end();
      return;
    }
    const query = url.searchParams.get("q") ?? "";
    queries.push(query);
    if (query === "captcha") {
      response.writeHead(200, { "content-type": "text/html" }).end("<html>captcha: prove you are human</html>");
      return;
    }
    if (query === "odd") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ results: [{ title: { nested: true }, url: null, content: 42 }, "not a hit"] }));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ results: [{ title: "Live", url: "https://live.example", content: "from the endpoint" }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("example.web_search", () => {
  it("T1 searches the shipped index offline by default and says so", async () => {
    const result = await runTool(createWebSearch({ searxngUrl: "" }), { query: "sqlite wal", limit: 2 });
    expect(result.outcome).toBe("succeeded");
    const json = result.output?.json as { source: string; results: Array<{ title: string }> };
    expect(json.source).toBe("offline-index");
    expect(json.results[0]?.title).toBe("SQLite write-ahead logging");
  });

  it("T1 uses a configured SearXNG endpoint and says so", async () => {
    const result = await runTool(createWebSearch({ searxngUrl: baseUrl }), { query: "openworker" });
    expect(result.output?.json).toMatchObject({ source: "searxng", results: [{ title: "Live", snippet: "from the endpoint" }] });
    expect(queries).toContain("openworker");
    expect(result.progressEvents).toEqual([{ message: "querying the search endpoint" }]);
  });

  it("T1 an unreachable endpoint is a ToolError, not a crash", async () => {
    const result = await runTool(createWebSearch({ searxngUrl: `${baseUrl}/missing/` }), { query: "x" });
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe("SEARCH_FAILED");
  });

  it("T1 an endpoint answering HTML (a captcha page) is a ToolError that does not echo the page", async () => {
    const result = await runTool(createWebSearch({ searxngUrl: baseUrl }), { query: "captcha" });
    expect(result.outcome).toBe("failed");
    expect(result.error?.code).toBe("SEARCH_FAILED");
    expect(result.error?.message).not.toContain("captcha");
  });

  it('T1 hits with fields of the wrong type become empty text, not "[object Object]"', async () => {
    const result = await runTool(createWebSearch({ searxngUrl: baseUrl }), { query: "odd" });
    expect(result.output?.json).toMatchObject({
      results: [
        { title: "", url: "", snippet: "42" },
        { title: "", url: "", snippet: "" },
      ],
    });
  });

  it("E5 refuses unknown or empty arguments before searching", async () => {
    expect((await runTool(createWebSearch(), { query: "" })).error?.code).toBe("ARGUMENTS_INVALID");
    expect((await runTool(createWebSearch(), { query: "x", extra: 1 })).error?.code).toBe("ARGUMENTS_INVALID");
  });

  it("T5 tells the model which source it searches, as a model-safe fact", () => {
    expect(createWebSearch({ searxngUrl: "" }).modelContext?.("s")).toEqual({ source: "offline-index" });
  });

  it("registers exactly one tool through register(registry)", () => {
    const names: string[] = [];
    register({ register: (tool) => void names.push(tool.descriptor().name) });
    expect(names).toEqual(["example.web_search"]);
  });
});
