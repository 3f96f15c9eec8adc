import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { readLines, type DroppedLine } from "@openworker/harness-client/internal";
import type { McpSdk } from "./sdk.js";

/** The longest request line `serve --mcp` takes on stdio: the MCP SDK's own stdio bound (10 MiB). */
export const MAX_MCP_LINE_BYTES = 10 * 1024 * 1024;

/**
 * The MCP stdio server transport of `serve --mcp`: newline-delimited JSON-RPC on the
 * client's stdin and stdout, as the SDK's `StdioServerTransport`, but every line gets an
 * answer or a message. `serveStdio` runs over it and decides the connection's protocol era
 * from its first message. A line over {@link MAX_MCP_LINE_BYTES} is dropped as it streams in
 * and answered with an error under its request's id (found at either end of the line,
 * where clients put it), so the client stops waiting; the SDK's transport reports it only
 * through `onerror` and stops reading. A line that is not JSON is answered with a parse
 * error, one that is not JSON-RPC with an invalid-request error when it has an id.
 */
export class McpStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;
  readonly #parse: McpSdk["parseJSONRPCMessage"];
  #stop: (() => void) | undefined;

  constructor(sdk: McpSdk, input: NodeJS.ReadableStream, output: NodeJS.WritableStream) {
    this.#input = input;
    this.#output = output;
    this.#parse = sdk.parseJSONRPCMessage;
  }

  async start(): Promise<void> {
    if (this.#stop) throw new Error("McpStdioTransport already started");
    this.#stop = readLines(this.#input, MAX_MCP_LINE_BYTES, {
      line: (line) => this.#receive(line),
      tooLong: (dropped) =>
        this.#refuse(
          requestIdOf(dropped),
          -32600,
          `the request line of ${dropped.bytes} bytes was dropped: serve --mcp takes messages of at most ${MAX_MCP_LINE_BYTES} bytes (10 MiB) on stdio`,
        ),
      end: () => undefined,
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#output.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    this.#stop?.();
    if (this.#input.listenerCount("data") === 0) this.#input.pause();
    this.onclose?.();
  }

  #receive(line: string): void {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.#refuse(null, -32700, `parse error: the line is not JSON (${(error as Error).message})`);
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = this.#parse(value);
    } catch (error) {
      const id = (value as { id?: unknown } | null)?.id;
      if (typeof id === "string" || typeof id === "number") this.#refuse(id, -32600, `invalid request: not a JSON-RPC 2.0 message (${firstIssue(error)})`);
      else this.onerror?.(new Error(`dropped a line that is not a JSON-RPC 2.0 message: ${line.slice(0, 200)}`));
      return;
    }
    this.onmessage?.(message);
  }

  #refuse(id: string | number | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}

/** What the SDK's schema found wrong first (a Zod error lists issues), else "wrong shape". */
function firstIssue(error: unknown): string {
  const issues = (error as { issues?: readonly { message?: unknown }[] } | null)?.issues;
  const message = Array.isArray(issues) ? issues[0]?.message : undefined;
  return typeof message === "string" ? message : "wrong shape";
}

const ID = String.raw`"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")`;
/** The id as the first member of the top-level object, or right after `"jsonrpc":"2.0"`. */
const ID_AT_HEAD = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?${ID}\s*[,}]`);
/** The id as the last member of the top-level object (the SDK client writes it last). */
const ID_AT_TAIL = new RegExp(String.raw`[,{]\s*${ID}\s*\}\s*$`);

/** The request id of a dropped line, when either end shows it at the top level; else `null`. */
function requestIdOf({ head, tail }: DroppedLine): string | number | null {
  const found = ID_AT_HEAD.exec(head) ?? ID_AT_TAIL.exec(tail);
  if (found === null) return null;
  try {
    const id = JSON.parse(found[1]!) as unknown;
    return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : null;
  } catch {
    return null;
  }
}
