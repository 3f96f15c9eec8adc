import { createInterface } from "node:readline";
import { OpenWorkerError } from "@openworker/tools-sdk";

/**
 * JSON-RPC 2.0 error codes used on the wire by `serve --stdio`.
 *
 * @example
 * ```ts
 * if (response.error?.code === JSON_RPC_ERRORS.METHOD_NOT_FOUND) upgradeHarness();
 * ```
 */
export const JSON_RPC_ERRORS = Object.freeze({
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  /** Any OpenWorker error; `error.data.code` carries its stable code. */
  SERVER_ERROR: -32000,
});

/** Handles what the other side sends. */
export interface JsonRpcHandlers {
  /** Answers a request; a thrown `OpenWorkerError` becomes an error response with `data.code`. */
  request(method: string, params: unknown, id: number | string): Promise<unknown>;
  notification?(method: string, params: unknown): void;
}

type Message = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };

/**
 * One side of a newline-delimited JSON-RPC 2.0 connection (one JSON message per line,
 * UTF-8, `\n`-terminated): both sides may send requests, responses and notifications.
 * Used by `serve --stdio` and by {@link HarnessClient}.
 */
export class JsonRpcPeer {
  readonly #output: NodeJS.WritableStream;
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  readonly #handlers: JsonRpcHandlers;
  readonly closed: Promise<void>;
  #nextId = 1;
  #open = true;

  constructor(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, handlers: JsonRpcHandlers) {
    this.#output = output;
    this.#handlers = handlers;
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on("line", (line) => this.#receive(line));
    this.closed = new Promise((resolve) => {
      lines.on("close", () => {
        this.#open = false;
        for (const pending of this.#pending.values()) pending.reject(new OpenWorkerError("JSON_RPC_CLOSED", "the connection closed before the answer came"));
        this.#pending.clear();
        resolve();
      });
    });
  }

  /** Sends a request and waits for its response; rejects with the remote error (its `data.code` as `code`). */
  request(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    if (!this.#open) return Promise.reject(new OpenWorkerError("JSON_RPC_CLOSED", `cannot send ${method}: the connection is closed`));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.delete(id)) return;
        this.notify("$/cancelRequest", { id });
        reject(new OpenWorkerError("JSON_RPC_CANCELLED", `${method} was cancelled`));
      };
      this.#pending.set(id, {
        resolve: (value) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(value);
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#send({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    if (this.#open) this.#send({ jsonrpc: "2.0", method, params });
  }

  #send(message: unknown): void {
    this.#output.write(`${JSON.stringify(message)}\n`);
  }

  #receive(line: string): void {
    if (line.trim() === "") return;
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      this.#send({ jsonrpc: "2.0", id: null, error: { code: JSON_RPC_ERRORS.PARSE_ERROR, message: "the line is not JSON" } });
      return;
    }
    if (typeof message !== "object" || message === null || message.jsonrpc !== "2.0") {
      this.#send({ jsonrpc: "2.0", id: null, error: { code: JSON_RPC_ERRORS.INVALID_REQUEST, message: 'not a JSON-RPC 2.0 message (needs "jsonrpc": "2.0")' } });
      return;
    }
    if (typeof message.method === "string") {
      const id = message.id;
      if (id === undefined) {
        this.#handlers.notification?.(message.method, message.params);
        return;
      }
      if (typeof id !== "number" && typeof id !== "string") {
        this.#send({ jsonrpc: "2.0", id: null, error: { code: JSON_RPC_ERRORS.INVALID_REQUEST, message: "id must be a number or a string" } });
        return;
      }
      this.#handlers.request(message.method, message.params, id).then(
        (result) => this.#send({ jsonrpc: "2.0", id, result: result ?? null }),
        (error: unknown) => this.#send({ jsonrpc: "2.0", id, error: toWireError(error) }),
      );
      return;
    }
    const pending = typeof message.id === "number" ? this.#pending.get(message.id) : undefined;
    if (!pending) return;
    this.#pending.delete(message.id as number);
    if (message.error !== undefined) pending.reject(fromWireError(message.error));
    else pending.resolve(message.result);
  }
}

/** An error as a JSON-RPC error object: OpenWorker codes travel in `data.code`. */
export function toWireError(error: unknown): { code: number; message: string; data?: { code: string } } {
  if (OpenWorkerError.isInstance(error)) {
    const rpc = typeof error.details.rpcCode === "number" ? error.details.rpcCode : JSON_RPC_ERRORS.SERVER_ERROR;
    return { code: rpc, message: error.message, data: { code: error.code } };
  }
  return { code: JSON_RPC_ERRORS.SERVER_ERROR, message: error instanceof Error ? error.message : String(error), data: { code: "INTERNAL" } };
}

function fromWireError(error: unknown): OpenWorkerError {
  const body = (typeof error === "object" && error !== null ? error : {}) as { code?: unknown; message?: unknown; data?: { code?: unknown } };
  const code = typeof body.data?.code === "string" ? body.data.code : `JSON_RPC_${String(body.code ?? "ERROR")}`;
  return new OpenWorkerError(code, typeof body.message === "string" ? body.message : "the remote side failed", { details: { rpcCode: body.code } });
}

/** A request error with a JSON-RPC code of its own (unknown method, bad params). */
export function rpcError(rpcCode: number, code: string, message: string): OpenWorkerError {
  return new OpenWorkerError(code, message, { details: { rpcCode } });
}
