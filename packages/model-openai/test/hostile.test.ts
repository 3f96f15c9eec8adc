import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAICompatibleProvider, type OpenAICompatibleOptions } from "../src/index.js";
import type { ModelRequest } from "@openworker/runtime";
import { chatCompletion } from "../src/testing/index.js";
import { rejection } from "./support/rejection.js";

// A hostile or broken endpoint (E1-style bounds, E6): every answer it can give ends the
// attempt with a coded error within the provider's bounds, and no error carries the key.
// These servers need control of the socket (headers first, then a trickle or a flood),
// which the scripted fake endpoint does not give, so each is a plain node:http server on
// 127.0.0.1 port 0.

const API_KEY = "sk-hostile-0123456789abcdef-SECRET";
// Generous: only there to tell an answer from a hang; the bounds under test are 300 ms.
const HANG = 10_000;

/** A raw endpoint: every request's body is read, then `respond` writes whatever it likes. */
interface RawEndpoint {
  readonly baseURL: string;
  /** How many requests arrived. */
  readonly hits: () => number;
  /** Settles when the connection of request `index` is closed (by either side). */
  readonly closed: (index: number) => Promise<void>;
  close(): Promise<void>;
}

type Respond = (res: ServerResponse, req: IncomingMessage, index: number) => void;

const endpoints: RawEndpoint[] = [];

afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.close()));
});

async function rawEndpoint(respond: Respond): Promise<RawEndpoint> {
  const closings: Array<Promise<void>> = [];
  let hits = 0;
  const server = createServer((req, res) => {
    const index = hits++;
    closings[index] = new Promise((resolve) => res.once("close", () => resolve()));
    req.resume();
    req.once("end", () => respond(res, req, index));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint: RawEndpoint = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    hits: () => hits,
    closed: (index) => closings[index] ?? Promise.reject(new Error(`no request ${index}`)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  endpoints.push(endpoint);
  return endpoint;
}

/** Writes `chunk` every `everyMs` until the connection closes. */
function trickle(res: ServerResponse, chunk: string, everyMs: number): void {
  const timer = setInterval(() => res.write(chunk), everyMs);
  res.once("close", () => clearInterval(timer));
}

/** Writes `chunk` as fast as the connection takes it until it closes. */
function flood(res: ServerResponse, chunk: string): void {
  const write = (): void => {
    if (res.destroyed) return;
    if (res.write(chunk)) setImmediate(write);
    else res.once("drain", write);
  };
  write();
}

function provider(endpoint: RawEndpoint, options: Partial<OpenAICompatibleOptions> = {}): OpenAICompatibleProvider {
  return new OpenAICompatibleProvider({ baseURL: endpoint.baseURL, model: "fake-model", apiKey: API_KEY, ...options });
}

function request(signal = new AbortController().signal): ModelRequest {
  return { model: "", instructions: "", facts: {}, messages: [{ role: "user", content: "hello" }], tools: [], signal };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

describe("E1-style bound: timeoutMs is one deadline for the whole request", () => {
  it(
    "E1 a body trickling in after the headers ends as the timeout error, and the connection is dropped",
    async () => {
      const endpoint = await rawEndpoint((res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"id":"x","choices":[');
        trickle(res, " ", 50);
      });

      const error = await rejection(provider(endpoint, { timeoutMs: 300 }).complete(request()));

      expect(error.code).toBe("MODEL_REQUEST_FAILED");
      expect(error.details).toMatchObject({ reason: "timeout", timeoutMs: 300 });
      expect(error.message).toContain("300 ms");
      await endpoint.closed(0);
    },
    HANG,
  );

  it(
    "E1 a body that declares its length but never finishes ends as the timeout error",
    async () => {
      const endpoint = await rawEndpoint((res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
        res.write("{");
        trickle(res, " ", 50);
      });
      const error = await rejection(provider(endpoint, { timeoutMs: 300 }).complete(request()));
      expect(error.details).toMatchObject({ reason: "timeout" });
      await endpoint.closed(0);
    },
    HANG,
  );

  it(
    "E1 the caller's signal still ends a trickling body as MODEL_REQUEST_CANCELLED, not as a timeout",
    async () => {
      const controller = new AbortController();
      const endpoint = await rawEndpoint((res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write("{");
        setTimeout(() => controller.abort(new Error("user pressed stop")), 50);
        trickle(res, " ", 20);
      });
      const error = await rejection(provider(endpoint, { timeoutMs: 60_000 }).complete(request(controller.signal)));
      expect(error.code).toBe("MODEL_REQUEST_CANCELLED");
      await endpoint.closed(0);
    },
    HANG,
  );
});

describe("E1-style bound: maxResponseBytes caps what one response can make the host buffer", () => {
  it(
    "E1 a successful body that never ends fails with reason too-large naming the limit, and is not read further",
    async () => {
      const endpoint = await rawEndpoint((res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"id":"x","choices":[{"message":{"content":"');
        flood(res, "f".repeat(16 * 1024));
      });

      const error = await rejection(provider(endpoint, { maxResponseBytes: 256 * 1024 }).complete(request()));

      expect(error.code).toBe("MODEL_REQUEST_FAILED");
      expect(error.details).toMatchObject({ reason: "too-large", limit: 256 * 1024 });
      expect(error.message).toContain("maxResponseBytes");
      await endpoint.closed(0);
    },
    HANG,
  );

  it(
    "E1 a Content-Length past the limit fails at once, before the body arrives",
    async () => {
      const endpoint = await rawEndpoint((res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": String(2 * 1024 ** 3) });
        res.write("{");
        trickle(res, " ", 200);
      });
      // timeoutMs is long: only the cap can end this attempt in time.
      const error = await rejection(provider(endpoint, { timeoutMs: 60_000 }).complete(request()));
      expect(error.details).toMatchObject({ reason: "too-large", limit: 32 * 1024 * 1024 });
      await endpoint.closed(0);
    },
    HANG,
  );

  it(
    "E1 a compressed body that inflates past the limit fails too-large although its Content-Length is small",
    async () => {
      const inflated = `{"id":"x","choices":[{"message":{"content":"${" ".repeat(4 * 1024 * 1024)}"}}]}`;
      const compressed = gzipSync(inflated);
      const endpoint = await rawEndpoint((res) => {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(compressed.length) });
        res.end(compressed);
      });
      expect(compressed.length).toBeLessThan(64 * 1024);
      const error = await rejection(provider(endpoint, { maxResponseBytes: 1024 * 1024 }).complete(request()));
      expect(error.details).toMatchObject({ reason: "too-large", limit: 1024 * 1024 });
    },
    HANG,
  );

  it(
    "E1 an error status whose body never ends fails as that HTTP status, reading at most 64 KiB of it",
    async () => {
      const endpoint = await rawEndpoint((res) => {
        res.writeHead(500, { "content-type": "text/plain" });
        flood(res, `overloaded ${"e".repeat(16 * 1024)}`);
      });
      const error = await rejection(provider(endpoint, { timeoutMs: 60_000 }).complete(request()));
      expect(error.details).toMatchObject({ reason: "http", status: 500 });
      expect(error.message).toContain("HTTP 500: overloaded");
      await endpoint.closed(0);
    },
    HANG,
  );

  it(
    "answers within the limit pass, whether their length is declared, chunked or compressed",
    async () => {
      const body = JSON.stringify(chatCompletion({ content: "fits" }));
      const endpoint = await rawEndpoint((res, _req, index) => {
        if (index === 0) return json(res, 200, JSON.parse(body));
        if (index === 1) {
          res.writeHead(200, { "content-type": "application/json" });
          res.write(body.slice(0, 20));
          res.end(body.slice(20));
          return;
        }
        const compressed = gzipSync(body);
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(compressed.length) });
        res.end(compressed);
      });
      const model = provider(endpoint, { maxResponseBytes: Buffer.byteLength(body) });
      for (let index = 0; index < 3; index += 1) expect((await model.complete(request())).text).toBe("fits");
    },
    HANG,
  );
});

describe("E4 retries stay within the deadline", () => {
  it(
    "E4 a Retry-After past the deadline is not waited: one request, the HTTP 429 at once, no timer warning",
    async () => {
      const warnings: Error[] = [];
      const onWarning = (warning: Error): void => void warnings.push(warning);
      process.on("warning", onWarning);
      try {
        const asks: Array<Record<string, string>> = [
          { "retry-after": "20" },
          { "retry-after": String(365 * 24 * 3600) },
          { "retry-after-ms": String(365 * 24 * 3600 * 1000) },
        ];
        for (const headers of asks) {
          const endpoint = await rawEndpoint((res) => json(res, 429, { error: { message: "slow down" } }, headers));
          const error = await rejection(provider(endpoint, { timeoutMs: 300, maxRetries: 3 }).complete(request()));
          expect(error.details).toMatchObject({ reason: "http", status: 429 });
          expect(endpoint.hits()).toBe(1);
        }
        // A TimeoutOverflowWarning is emitted on the next tick; give it one.
        await new Promise((resolve) => setImmediate(resolve));
        expect(warnings.map((warning) => warning.name)).not.toContain("TimeoutOverflowWarning");
      } finally {
        process.off("warning", onWarning);
      }
    },
    HANG,
  );

  it(
    "E4 many retries allowed still end within timeoutMs: the retry that would pass the deadline is not made",
    async () => {
      const endpoint = await rawEndpoint((res) => json(res, 503, { error: { message: "busy" } }, { "retry-after-ms": "100" }));
      const error = await rejection(provider(endpoint, { timeoutMs: 300, maxRetries: 1000 }).complete(request()));
      expect(error.details).toMatchObject({ reason: "http", status: 503 });
      // Requests at about 0, 100 and 200 ms; the wait after the third would end past 300 ms.
      expect(endpoint.hits()).toBeLessThanOrEqual(3);
    },
    HANG,
  );

  it(
    "E4 a retried request that hangs ends at the deadline of the whole attempt",
    async () => {
      const endpoint = await rawEndpoint((res, _req, index) => {
        if (index === 0) return json(res, 503, { error: { message: "busy" } }, { "retry-after-ms": "10" });
        res.writeHead(200, { "content-type": "application/json" });
        trickle(res, " ", 50);
      });
      // A longer deadline here, so a slow first answer on a busy machine still leaves room for the retry.
      const error = await rejection(provider(endpoint, { timeoutMs: 1000, maxRetries: 5 }).complete(request()));
      expect(error.details).toMatchObject({ reason: "timeout" });
      expect(endpoint.hits()).toBe(2);
    },
    HANG,
  );
});

describe("E6 no error carries the key", () => {
  it("E6 a key straddling the 500-character cut of server text is redacted whole, not cut into a leaking prefix", async () => {
    const endpoint = await rawEndpoint((res, req, index) => {
      const key = String(req.headers.authorization).slice("Bearer ".length);
      if (index === 0) return json(res, 401, { error: { message: `${"x".repeat(490)}${key}` } });
      res.writeHead(401, { "content-type": "text/plain" });
      res.end(`${"y".repeat(495)} Bearer ${key}`);
    });
    const model = provider(endpoint);
    for (let index = 0; index < 2; index += 1) {
      const error = await rejection(model.complete(request()));
      expect(error.details).toMatchObject({ reason: "http", status: 401 });
      expect(inspect(error, { depth: 10 })).not.toContain(API_KEY.slice(0, 10));
    }
  });

  it("E6 a response header echoing the Authorization header keeps the client's error out of the cause", async () => {
    const endpoint = await rawEndpoint((res, req) => json(res, 403, { error: { message: "denied" } }, { "x-echo-auth": String(req.headers.authorization) }));
    const error = await rejection(provider(endpoint).complete(request()));
    expect(error.details).toMatchObject({ reason: "http", status: 403 });
    expect(error.cause).toBeUndefined();
    expect(inspect(error, { depth: 10, maxStringLength: Infinity })).not.toContain(API_KEY);
  });

  it("E6 the client's error stays as the cause when it carries no secret", async () => {
    const endpoint = await rawEndpoint((res) => json(res, 403, { error: { message: "denied" } }, { "x-note": "nothing secret" }));
    const error = await rejection(provider(endpoint).complete(request()));
    expect(error.cause).toBeInstanceOf(Error);
  });
});
