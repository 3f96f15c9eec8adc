import { inspect } from "node:util";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAICompatibleProvider, type OpenAICompatibleOptions } from "../src/index.js";
import { chatCompletion, errorReply } from "../src/testing/index.js";
import { API_KEY, closeServers, provider, request, serve, withEnv } from "./provider-helpers.js";
import { rejection } from "./support/rejection.js";

afterEach(closeServers);

describe("OpenAICompatibleProvider catalog and readiness", () => {
  it("I1 lists the configured models with the default first, without I/O", () => {
    const provider = new OpenAICompatibleProvider({
      baseURL: "http://127.0.0.1:9/v1",
      model: "qwen2.5:7b",
      models: ["llama3.1:8b", "qwen2.5:7b"],
      apiKey: "k",
    });
    const rows = provider.listModels();
    expect(rows).not.toBeInstanceOf(Promise);
    expect(rows).toEqual([
      { provider: "openai", model: "qwen2.5:7b" },
      { provider: "openai", model: "llama3.1:8b" },
    ]);
    expect(provider.defaultModel).toBe("qwen2.5:7b");
    expect(provider.maxToolNameLength).toBe(64);
    expect(new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m", id: "ollama" }).listModels()).toEqual([
      { provider: "ollama", model: "m" },
    ]);
  });

  it("I1 readiness is synchronous: api-key for an explicit key, undefined for an unknown model", () => {
    const provider = new OpenAICompatibleProvider({ baseURL: "https://api.openai.com/v1", model: "gpt-4.1-mini", apiKey: API_KEY });
    const readiness = provider.readModelReadiness("gpt-4.1-mini");
    // Read without awaiting: a promise here would fail the equality.
    expect(readiness).toEqual({ accountType: "api-key" });
    expect(provider.readModelReadiness("gpt-unknown")).toBeUndefined();
    expect(JSON.stringify(readiness)).not.toContain(API_KEY);
  });

  it("I1 readiness is a failed observation (undefined) once the endpoint refused the key (401), and comes back when a request succeeds", async () => {
    const server = await serve([
      () => errorReply(403, "This model is not permitted for your key."),
      () => errorReply(401, "Incorrect API key provided.", "invalid_request_error"),
      () => errorReply(500, "busy"),
      () => chatCompletion({ content: "hello again" }),
    ]);
    const model = provider(server);
    expect(model.readModelReadiness("fake-model")).toEqual({ accountType: "api-key" });
    // A 403 refuses one model to a key that may work for the others: readiness stands.
    await rejection(model.complete(request()));
    expect(model.readModelReadiness("fake-model")).toEqual({ accountType: "api-key" });
    await rejection(model.complete(request()));
    expect(model.readModelReadiness("fake-model")).toBeUndefined();
    // A server error says nothing of the key: the refusal stands until a request succeeds.
    await rejection(model.complete(request()));
    expect(model.readModelReadiness("fake-model")).toBeUndefined();
    await model.complete(request());
    expect(model.readModelReadiness("fake-model")).toEqual({ accountType: "api-key" });
  });

  it("I1 readiness reads api-key from OPENAI_API_KEY and local for a keyless endpoint", async () => {
    await withEnv({ OPENAI_API_KEY: "sk-from-env" }, () => {
      const provider = new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m" });
      expect(provider.readModelReadiness("m")).toEqual({ accountType: "api-key" });
    });
    await withEnv({ OPENAI_API_KEY: undefined }, () => {
      const provider = new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:11434/v1", model: "m" });
      expect(provider.readModelReadiness("m")).toEqual({ accountType: "local" });
    });
  });

  it("I1 E6 apiKey: null declares a keyless endpoint: the environment's key is neither read nor sent", async () => {
    const server = await serve([() => chatCompletion({ content: "ok" })]);
    await withEnv({ OPENAI_API_KEY: "sk-from-env-must-not-leave" }, async () => {
      const provider = new OpenAICompatibleProvider({ baseURL: server.baseURL, model: "m", apiKey: null });
      expect(provider.readModelReadiness("m")).toEqual({ accountType: "local" });
      await provider.complete(request());
    });
    expect(server.headers[0]?.authorization).toBe("Bearer not-needed");
  });

  it("sends the not-needed placeholder key to a keyless local endpoint", async () => {
    const server = await serve([() => chatCompletion({ content: "ok" })]);
    await withEnv({ OPENAI_API_KEY: undefined }, () => new OpenAICompatibleProvider({ baseURL: server.baseURL, model: "m" }).complete(request()));
    expect(server.headers[0]?.authorization).toBe("Bearer not-needed");
  });

  it("E6 secrets() lists the key from the option and every non-empty header value, and never the keyless placeholder", () => {
    const configured = new OpenAICompatibleProvider({
      baseURL: "http://127.0.0.1:9/v1",
      model: "m",
      apiKey: API_KEY,
      headers: { "x-gateway-token": "gw-token-123456", "x-short": "v1", "x-empty": "" },
    });
    expect(configured.secrets()).toEqual([API_KEY, "gw-token-123456", "v1"]);
    expect(new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m", apiKey: null }).secrets()).toEqual([]);
  });

  it("E6 secrets() lists the key read from OPENAI_API_KEY and the values of OPENAI_CUSTOM_HEADERS the client sends", async () => {
    await withEnv({ OPENAI_API_KEY: "sk-from-env-0123456789", OPENAI_CUSTOM_HEADERS: "X-Gateway-Key: gw-env-secret-42\nX-Other: x" }, () => {
      const provider = new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m" });
      expect(provider.secrets()).toEqual(["sk-from-env-0123456789", "gw-env-secret-42", "x"]);
    });
    await withEnv({ OPENAI_API_KEY: undefined, OPENAI_CUSTOM_HEADERS: undefined }, () => {
      expect(new OpenAICompatibleProvider({ baseURL: "http://127.0.0.1:9/v1", model: "m" }).secrets()).toEqual([]);
    });
  });

  it("E6 a value of OPENAI_CUSTOM_HEADERS is redacted from server text like a configured header", async () => {
    const server = await serve([() => errorReply(400, "bad gateway key gw-env-secret-42")]);
    const error = await withEnv({ OPENAI_CUSTOM_HEADERS: "X-Gateway-Key: gw-env-secret-42" }, () => rejection(provider(server).complete(request())));
    expect(server.headers[0]?.["x-gateway-key"]).toBe("gw-env-secret-42");
    expect(inspect(error, { depth: 10 })).not.toContain("gw-env-secret-42");
  });

  it("refuses unusable options with MODEL_PROVIDER_CONFIG_INVALID naming the field", () => {
    const invalid = (options: OpenAICompatibleOptions): OpenWorkerError => {
      try {
        new OpenAICompatibleProvider(options);
      } catch (error) {
        if (OpenWorkerError.hasCode(error, "MODEL_PROVIDER_CONFIG_INVALID")) return error;
        throw error;
      }
      throw new Error("expected the constructor to throw");
    };
    expect(invalid({ baseURL: "not a url", model: "m" }).details).toEqual({ field: "baseURL" });
    expect(invalid({ baseURL: "ftp://127.0.0.1/v1", model: "m" }).message).toContain("http or https");
    const credentials = invalid({ baseURL: "http://user:hunter22@127.0.0.1/v1", model: "m" });
    expect(credentials.message).not.toContain("hunter22");
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "" }).details).toEqual({ field: "model" });
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", maxToolNameLength: 0 }).details).toEqual({ field: "maxToolNameLength" });
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", maxRetries: -1 }).details).toEqual({ field: "maxRetries" });
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", timeoutMs: 1.5 }).details).toEqual({ field: "timeoutMs" });
    // Node's timers overflow past 2^31 - 1 ms and fire after 1 ms: such a deadline would end every request at once.
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", timeoutMs: 2 ** 31 }).message).toContain("at most 2147483647");
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", maxResponseBytes: 0 }).details).toEqual({ field: "maxResponseBytes" });
    expect(invalid({ baseURL: "http://127.0.0.1/v1", model: "m", models: [""] }).details).toEqual({ field: "models[0]" });
  });
});
