import { OpenAICompatibleProvider, type OpenAICompatibleOptions } from "../src/index.js";
import type { ModelRequest, ModelToolDefinition } from "@openworker/runtime";
import { startFakeOpenAI, type FakeOpenAIServer, type FakeScriptStep } from "../src/testing/index.js";

// Shared by the provider tests (provider, provider-errors, provider-catalog): a fake
// endpoint per test, a provider pointed at it, and a plain request.

export const API_KEY = "sk-test-0123456789abcdef-SECRET";

export const WEB_SEARCH: ModelToolDefinition = {
  name: "example__web_search",
  description: "Search the web.",
  inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
};

const servers: FakeOpenAIServer[] = [];

/** Closes every fake endpoint `serve` started; each test file runs it after each test. */
export async function closeServers(): Promise<void> {
  await Promise.all(servers.splice(0).map((server) => server.close()));
}

export async function serve(script: FakeScriptStep[]): Promise<FakeOpenAIServer> {
  const server = await startFakeOpenAI(script);
  servers.push(server);
  return server;
}

export function provider(server: FakeOpenAIServer, options: Partial<OpenAICompatibleOptions> = {}): OpenAICompatibleProvider {
  return new OpenAICompatibleProvider({ baseURL: server.baseURL, model: "fake-model", apiKey: API_KEY, ...options });
}

export function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "fake-model",
    instructions: "You are a careful coworker.",
    facts: {},
    messages: [{ role: "user", content: "hello" }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** Runs `body` with environment variables set, restoring them afterwards. */
export async function withEnv<T>(values: Record<string, string | undefined>, body: () => T | Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(values).map((key) => [key, process.env[key]]));
  const apply = (entries: Record<string, string | undefined>): void => {
    for (const [key, value] of Object.entries(entries)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  apply(values);
  try {
    return await body();
  } finally {
    apply(saved);
  }
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}
