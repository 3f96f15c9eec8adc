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
  /**
   * Answers a request; a thrown `OpenWorkerError` becomes an error response with `data.code`.
   * `signal` aborts when the other side sends `$/cancelRequest {id}` for it (also when that
   * arrives in the same read, before the answer began), and when the connection closes if
   * the peer was made with `abortOnClose`: whoever answers no longer waits for the answer.
   */
  request(method: string, params: unknown, id: number | string, signal: AbortSignal): Promise<unknown>;
  /** Every notification but `$/cancelRequest`, which the peer handles itself. */
  notification?(method: string, params: unknown): void;
}

type Message = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };

/**
 * One side of a newline-delimited JSON-RPC 2.0 connection (one JSON message per line,
 * UTF-8, `\n`-terminated): both sides may send requests, responses and notifications.
 * Used by `serve --stdio` and by {@link HarnessClient}.
 */
export class JsonRpcPeer {
  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;
  #waitingForDrain = false;
  /** The other side's requests not answered yet, by id: aborted by `$/cancelRequest {id}`. */
  readonly #inFlight = new Map<number | string, AbortController>();
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  readonly #handlers: JsonRpcHandlers;
  readonly closed: Promise<void>;
  #nextId = 1;
  #open = true;

  /**
   * `options.abortOnClose`: when the connection closes, abort the signals of the other side's
   * requests still being answered (nobody is left to read the answer). Off by default: the
   * harness answers every request it took even after its host closed stdin.
   */
  constructor(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, handlers: JsonRpcHandlers, options: { abortOnClose?: boolean } = {}) {
    this.#input = input;
    this.#output = output;
    this.#handlers = handlers;
    // A write to a side that went away (EPIPE) must not crash the process: its end shows as the input closing.
    output.on("error", () => undefined);
    this.closed = new Promise((resolve) => {
      readLines(input, MAX_LINE_BYTES, {
        line: (line) => this.#receive(line),
        tooLong: ({ bytes }) =>
          this.#send({
            jsonrpc: "2.0",
            id: null,
            error: { code: JSON_RPC_ERRORS.INVALID_REQUEST, message: `a line of ${bytes} bytes was dropped: messages are limited to ${MAX_LINE_BYTES} bytes` },
          }),
        end: () => {
          this.#open = false;
          for (const pending of this.#pending.values()) pending.reject(new OpenWorkerError("JSON_RPC_CLOSED", "the connection closed before the answer came"));
          this.#pending.clear();
          if (options.abortOnClose) {
            for (const controller of this.#inFlight.values())
              controller.abort(new OpenWorkerError("JSON_RPC_CLOSED", "the connection closed before the answer was sent"));
          }
          resolve();
        },
      });
    });
  }

  /**
   * Sends a request and waits for its response; rejects with the remote error (its `data.code`
   * as `code`). Aborting `signal` rejects with `JSON_RPC_CANCELLED` and sends `$/cancelRequest`;
   * a signal already aborted rejects at once and sends nothing.
   */
  request(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted) return Promise.reject(new OpenWorkerError("JSON_RPC_CANCELLED", `${method} was cancelled before it was sent`));
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
    // Backpressure: a peer that does not read what it is sent stops being read from, until
    // it drains; answers and events never pile up in memory without bound.
    if (!this.#output.write(`${JSON.stringify(message)}\n`) && !this.#waitingForDrain) {
      this.#waitingForDrain = true;
      this.#input.pause();
      this.#output.once("drain", () => {
        this.#waitingForDrain = false;
        this.#input.resume();
      });
    }
  }

  /** `$/cancelRequest {id}`: the other side no longer waits for that answer. Unknown ids are ignored (already answered). */
  #cancelIncoming(params: unknown): void {
    const id = typeof params === "object" && params !== null ? (params as { id?: unknown }).id : undefined;
    if (typeof id !== "number" && typeof id !== "string") return;
    this.#inFlight.get(id)?.abort(new OpenWorkerError("JSON_RPC_CANCELLED", `request ${JSON.stringify(id)} was cancelled by the other side ($/cancelRequest)`));
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
    if (Array.isArray(message)) {
      this.#send({
        jsonrpc: "2.0",
        id: null,
        error: { code: JSON_RPC_ERRORS.INVALID_REQUEST, message: "batches are not supported: send one message per line" },
      });
      return;
    }
    if (typeof message !== "object" || message === null || message.jsonrpc !== "2.0") {
      // Echo a usable id, so the sender can tell which request was refused.
      const id = typeof message === "object" && message !== null && (typeof message.id === "number" || typeof message.id === "string") ? message.id : null;
      this.#send({ jsonrpc: "2.0", id, error: { code: JSON_RPC_ERRORS.INVALID_REQUEST, message: 'not a JSON-RPC 2.0 message (needs "jsonrpc": "2.0")' } });
      return;
    }
    if (typeof message.method === "string") {
      const id = message.id;
      if (id === undefined) {
        if (message.method === "$/cancelRequest") this.#cancelIncoming(message.params);
        else this.#handlers.notification?.(message.method, message.params);
        return;
      }
      if (typeof id !== "number" && typeof id !== "string") {
        this.#send({ jsonrpc: "2.0", id: null, error: { code: JSON_RPC_ERRORS.INVALID_REQUEST, message: "id must be a number or a string" } });
        return;
      }
      // Two requests under one id could not be told apart by their answers: the second is refused.
      if (this.#inFlight.has(id)) {
        this.#send({
          jsonrpc: "2.0",
          id,
          error: { code: JSON_RPC_ERRORS.INVALID_REQUEST, message: `a request with id ${JSON.stringify(id)} is still in flight; use a new id` },
        });
        return;
      }
      // Made before the handler runs, so a `$/cancelRequest` later in the same read finds it.
      const controller = new AbortController();
      this.#inFlight.set(id, controller);
      const answered = () => void this.#inFlight.delete(id);
      this.#handlers.request(message.method, message.params, id, controller.signal).then(
        (result) => {
          answered();
          this.#send({ jsonrpc: "2.0", id, result: result ?? null });
        },
        (error: unknown) => {
          answered();
          this.#send({ jsonrpc: "2.0", id, error: toWireError(error) });
        },
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

/**
 * The longest line (one message) a peer accepts: a host's request holds at most a call's
 * arguments (256 KB) and a session's policy; an answer, a turn's report. Longer lines are
 * dropped as they stream in, never held whole, and answered with an error.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** How much of each end of a dropped line {@link readLines} keeps: enough to find a request's id there. */
const EDGE_BYTES = 1024;

/** A line over the bound, reported when it ends: its size and its first and last bytes (UTF-8, possibly cut mid-character). */
export interface DroppedLine {
  readonly bytes: number;
  readonly head: string;
  readonly tail: string;
}

/**
 * Splits `input` into UTF-8 lines (`\n`, an optional `\r` before it removed), holding at
 * most `maxBytes` of a line: a longer one is skipped up to its newline, never held
 * whole, and reported once through `tooLong` when it ends. `end` runs once when the
 * input ends or fails. Returns a function that stops reading.
 */
export function readLines(
  input: NodeJS.ReadableStream,
  maxBytes: number,
  handlers: { line: (text: string) => void; tooLong: (dropped: DroppedLine) => void; end: () => void },
): () => void {
  let parts: Buffer[] = [];
  let size = 0;
  let skipped: { bytes: number; head: Buffer; tail: Buffer } | undefined;
  const emit = (chunk: Buffer) => {
    const text = Buffer.concat([...parts, chunk]).toString("utf8");
    parts = [];
    size = 0;
    handlers.line(text.endsWith("\r") ? text.slice(0, -1) : text);
  };
  const skip = (chunk: Buffer) => {
    if (skipped === undefined) {
      const held = Buffer.concat([...parts, chunk]);
      skipped = { bytes: held.length, head: held.subarray(0, EDGE_BYTES), tail: held.subarray(-EDGE_BYTES) };
      parts = [];
      size = 0;
      return;
    }
    skipped.bytes += chunk.length;
    skipped.tail = Buffer.concat([skipped.tail, chunk]).subarray(-EDGE_BYTES);
  };
  const reportSkipped = () => {
    const { bytes, head, tail } = skipped!;
    skipped = undefined;
    handlers.tooLong({ bytes, head: head.toString("utf8"), tail: tail.toString("utf8").replace(/\r$/, "") });
  };
  const onData = (data: Buffer | string) => {
    let chunk = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10)) {
      const head = chunk.subarray(0, newline);
      chunk = chunk.subarray(newline + 1);
      if (skipped !== undefined || size + head.length > maxBytes) {
        skip(head);
        reportSkipped();
        continue;
      }
      emit(head);
    }
    if (chunk.length === 0) return;
    if (skipped !== undefined || size + chunk.length > maxBytes) {
      skip(chunk);
      return;
    }
    parts.push(chunk);
    size += chunk.length;
  };
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    if (skipped !== undefined) reportSkipped();
    else if (size > 0) emit(Buffer.alloc(0));
    handlers.end();
  };
  input.on("data", onData);
  input.on("end", finish);
  input.on("close", finish);
  input.on("error", finish);
  return () => {
    input.off("data", onData);
    input.off("end", finish);
    input.off("close", finish);
    input.off("error", finish);
  };
}
