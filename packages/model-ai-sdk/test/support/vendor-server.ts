import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The socket side of the fake vendors: a node:http server on 127.0.0.1 port 0 taking JSON
 * POSTs on one path, recording each body and its headers, and handing the response to
 * the vendor's script. The vendor is outside the system, so it is the one part a test
 * replaces; the AI SDK provider package and everything between it and the socket is real.
 */
export interface VendorServer<Body> {
  /** `http://127.0.0.1:<port>/v1`: the `baseURL` of the AI SDK provider. */
  readonly baseURL: string;
  readonly requests: Body[];
  readonly headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** One scripted answer: writes the response for request `index`; a promise that never settles keeps it open. */
export type Answer<Body> = (res: ServerResponse, body: Body, index: number) => void | Promise<void>;

export async function startVendorServer<Body>(route: string, script: readonly Answer<Body>[]): Promise<VendorServer<Body>> {
  const requests: Body[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== route)
        return sendJson(res, 404, { error: { type: "not_found_error", message: `no route ${req.method} ${req.url}` } });
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Body;
      const index = requests.length;
      requests.push(body);
      headers.push(req.headers);
      const step = script[index];
      if (step === undefined) return sendJson(res, 500, { error: { type: "api_error", message: `script exhausted at request ${index + 1}` } });
      void Promise.resolve(step(res, body, index)).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: { type: "api_error", message: String(error) } });
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "request-id": `req_fake_${status}` });
  res.end(text);
}

/** Server-sent events as the vendors send them: `event:` (when named) and `data:` lines, a blank line after each. */
export function sendEvents(res: ServerResponse, events: ReadonlyArray<{ readonly event?: string; readonly data: unknown }>): void {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  for (const { event, data } of events)
    res.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  res.end();
}
