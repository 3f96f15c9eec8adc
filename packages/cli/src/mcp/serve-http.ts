import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { ResolvedTool } from "@openworker/bundle-resolver";
import type { Session } from "@openworker/runtime";
import { OpenWorkerError } from "@openworker/tools-sdk";
import type { CommandContext } from "../cli/command.js";
import { CLI_ERROR_CODES } from "../cli/errors.js";
import { IdleExpiry } from "./idle-expiry.js";
import { checkLocalRequest } from "./local-request.js";
import { ModernSession } from "./modern-session.js";
import { ParkedCalls } from "./parked-calls.js";
import type { McpSdk } from "./sdk.js";
import { ServedCatalog, watchCatalog, type ToolNames } from "./served-catalog.js";
import { createToolServer } from "./tool-server.js";

/** What bounds the sessions of `serve --mcp --http`, and the names its tools are served by. */
export interface HttpLimits {
  readonly maxSessions: number;
  readonly idleTimeoutSeconds: number;
  readonly toolNames: ToolNames;
}

/** How long a stop waits for the answers of calls in flight to be written before it closes their streams. */
const STOP_GRACE_MS = 2_000;

/**
 * `serve --mcp --http`: streamable HTTP on 127.0.0.1, one endpoint (`/mcp`) for every
 * protocol era. Each request passes the loopback check first; then the SDK's own
 * classification (`isLegacyRequest`) routes it. 2025-era clients (`initialize`) get MCP
 * sessions, each its own OpenWorker session, bounded by `--max-sessions` and closed when
 * idle; 2026-07-28 clients are answered per request by the SDK's `createMcpHandler`, from
 * one shared OpenWorker session ({@link ModernSession}). Runs until `context.signal` asks
 * it to stop.
 */
export async function serveHttp(
  sdk: McpSdk,
  tools: readonly ResolvedTool[],
  openSession: () => Promise<Session>,
  context: CommandContext,
  requestedPort: number,
  { maxSessions, idleTimeoutSeconds, toolNames }: HttpLimits,
): Promise<void> {
  type Entry = { transport: InstanceType<McpSdk["NodeStreamableHTTPServerTransport"]>; session: Promise<Session>; idle: IdleExpiry; lastUsed: number };
  // In the order they were last used: the first idle one is the least recently used.
  const entries = new Map<string, Entry>();
  // Aborted when the server stops: calls still running are answered with an error at once.
  const stopping = new AbortController();
  // POSTs being answered: a stop lets their answers be written before it closes the streams.
  const posts = new Set<Promise<void>>();
  const modernSession = new ModernSession(openSession, idleTimeoutSeconds * 1000, () =>
    context.terminal.note(
      `closing the OpenWorker session of 2026-07-28 clients: idle for ${idleTimeoutSeconds} s (no request, event stream or tool call in progress)`,
    ),
  );
  // A tool call of a modern client when the session cannot open gets what a 2025 client's
  // initialize gets then: the session's error, its code in `error.data.code`.
  const modernSessionOf = () =>
    modernSession.session().catch((error: unknown) => {
      const refusal = openFailure(error);
      context.terminal.note(`refused a 2026-07-28 client's tool call: the OpenWorker session could not open (${refusal.code}: ${refusal.message})`);
      const { code, message, data } = refusalError(refusal);
      throw new sdk.ProtocolError(code, message, data);
    });
  const modernCatalog = new ServedCatalog(tools, toolNames);
  const modernHost = {
    session: modernSessionOf,
    calls: modernSession,
    stopping: stopping.signal,
    listChanged: () => modern.notify.toolsChanged(),
    // A call parked between a client's rounds keeps the shared session from expiring.
    parked: new ParkedCalls(sdk, stopping.signal, modernSession),
  };
  // Strict: 2025-era traffic never reaches it, it goes to the sessions below.
  const modern = sdk.createMcpHandler(() => createToolServer(sdk, modernCatalog, modernHost), { legacy: "reject" });
  const unwatchModern = watchCatalog(
    () => modernSession.current,
    modernCatalog,
    () => modern.notify.toolsChanged(),
  );
  const serveModern = sdk.toNodeHandler(modern);
  let port = requestedPort;
  const http = createServer((request, response) => {
    const handled = handle(request, response).catch((error: unknown) => {
      if (response.headersSent) return;
      if (error instanceof BodyTooLarge) reply(response, 413, -32600, error.message);
      else reply(response, 500, -32603, error instanceof Error ? error.message : String(error));
    });
    if (request.method !== "POST") return;
    posts.add(handled);
    void handled.finally(() => posts.delete(handled));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const local = checkLocalRequest({ host: request.headers.host, origin: request.headers.origin }, port);
    if (!local.ok) {
      context.terminal.note(`refused ${request.method} ${request.url}: ${local.reason}`);
      reply(response, 403, -32000, `forbidden: ${local.reason}`);
      return;
    }
    const pathname = pathOf(request.url);
    if (pathname === undefined) {
      reply(response, 400, -32000, "bad request: the request target is not a valid URL path; the MCP endpoint is /mcp");
      return;
    }
    if (pathname !== "/mcp") {
      reply(response, 404, -32000, "not found: the MCP endpoint is /mcp");
      return;
    }
    const sessionHeader = request.headers["mcp-session-id"];
    const known = typeof sessionHeader === "string" ? entries.get(sessionHeader) : undefined;
    if (known) {
      entries.delete(sessionHeader as string);
      known.lastUsed = Date.now();
      entries.set(sessionHeader as string, known);
      // Settles once the answer is written whole or the client went away: an event stream
      // (GET, or a POST answered over SSE) keeps its session from expiring while it is open.
      known.idle.begin();
      try {
        await known.transport.handleRequest(request, response);
      } finally {
        known.idle.end();
      }
      return;
    }
    // Also the answer for a session that ended (DELETE, idle expiry): 404 tells an MCP
    // client to initialize a new one.
    if (sessionHeader !== undefined) {
      reply(response, 404, -32001, "unknown MCP session (ended, expired after --idle-timeout, or never opened); initialize a new one");
      return;
    }
    if (request.method !== "POST") {
      reply(response, 400, -32000, "no MCP session: send initialize first");
      return;
    }
    const body = await readJson(request);
    if (body === NOT_JSON) {
      reply(response, 400, -32700, "parse error: the request body is not JSON");
      return;
    }
    if (stopping.signal.aborted) {
      reply(response, 503, -32000, "the MCP server is stopping");
      return;
    }
    if (!(await sdk.isLegacyRequest(await sdk.toWebRequest(request, body), body))) {
      modernSession.begin();
      try {
        await serveModern(request, response, body);
      } finally {
        modernSession.end();
      }
      return;
    }
    if (!sdk.isInitializeRequest(body)) {
      reply(response, 400, -32000, "no MCP session: the first request must be initialize");
      return;
    }
    // Only live sessions are in `entries` (an expired one has left it). At the bound the
    // least recently used idle session makes room, as a DELETE would end it: clients that
    // went away without DELETE cannot lock others out. Only when every session has work in
    // progress (a request being answered, an open event stream, a call) is a client refused.
    if (entries.size >= maxSessions && !evictIdle()) {
      reply(
        response,
        503,
        -32000,
        `too many MCP sessions (${maxSessions}, each with its own OpenWorker session and MCP processes), and none is idle; end one with DELETE, or restart with a higher --max-sessions`,
      );
      return;
    }
    // The OpenWorker session opens only once the transport accepted the initialize: one it
    // refuses (406, 415) gives the client no session id to end, so nothing may be left open.
    let session: Promise<Session> | undefined;
    const sessionOf = () => (session ??= openSession());
    // Why the session could not open (a policy the runtime refuses, a host file moved away):
    // the initialize is answered with it instead of a session the client could never use.
    let refusal: OpenWorkerError | undefined;
    // Closed as a DELETE closes it: `onclose` below drops the entry and closes the
    // OpenWorker session (its MCP processes ended and verified, M4; its close journaled).
    const idle = new IdleExpiry(idleTimeoutSeconds * 1000, () => {
      context.terminal.note(`closing MCP session ${transport.sessionId}: idle for ${idleTimeoutSeconds} s (no request, event stream or tool call in progress)`);
      void transport.close().catch(() => undefined);
    });
    const transport: Entry["transport"] = new sdk.NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Awaited by the transport before it hands the initialize on, so the open is over
      // (or failed) by the time the initialize is answered. The entry is set first: an
      // opening session holds its slot against --max-sessions.
      onsessioninitialized: async (id) => {
        entries.set(id, { transport, session: sessionOf(), idle, lastUsed: Date.now() });
        try {
          await sessionOf();
          // A client that went away while the session opened never got its id, so it can
          // never end it (DELETE): the session is closed now and its slot freed.
          if (response.destroyed || request.socket.destroyed) {
            entries.delete(id);
            setImmediate(() => void transport.close().catch(() => undefined));
          } else {
            idle.open();
          }
        } catch (error) {
          entries.delete(id);
          refusal = openFailure(error);
          context.terminal.note(`refused an MCP client's initialize: its OpenWorker session could not open (${refusal.code}: ${refusal.message})`);
        }
      },
    });
    let opened: Session | undefined;
    const catalog = new ServedCatalog(tools, toolNames);
    const server = createToolServer(sdk, catalog, {
      session: () => sessionOf().then((value) => (opened = value)),
      calls: idle,
      stopping: stopping.signal,
    });
    const unwatch = watchCatalog(
      () => opened,
      catalog,
      () => void server.sendToolListChanged().catch(() => undefined),
    );
    transport.onclose = () => {
      idle.stop();
      unwatch();
      if (transport.sessionId) entries.delete(transport.sessionId);
      void session?.then((value) => value.close()).catch(() => undefined);
    };
    await server.connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (refusal === undefined || !sdk.isInitializeRequest(message)) return deliver?.(message, extra);
      // The server never sees this initialize: the client gets the session's error under its
      // own request id (code in `error.data.code`), and the MCP session is dropped.
      const { id } = message as unknown as { id: string | number };
      // Closed whether the send worked or not (a client gone meanwhile makes it fail).
      const close = () => transport.close().catch(() => undefined);
      void transport.send({ jsonrpc: "2.0", id, error: refusalError(refusal) }).then(close, close);
    };
    idle.begin();
    try {
      await transport.handleRequest(request, response, body);
    } finally {
      idle.end();
    }
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", (error) =>
      reject(new OpenWorkerError(CLI_ERROR_CODES.LISTEN_FAILED, `cannot listen on 127.0.0.1:${requestedPort} (${error.message})`, { cause: error })),
    );
    http.listen(requestedPort, "127.0.0.1", () => resolve());
  });
  const address = http.address();
  port = typeof address === "object" && address ? address.port : requestedPort;
  context.terminal.note(`serving ${tools.length} tool(s) over MCP at http://127.0.0.1:${port}/mcp`);
  await new Promise<void>((resolve) => {
    if (context.signal.aborted) resolve();
    context.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  context.terminal.note("stopping the MCP server…");
  // Each call still running is answered with an error first (its cancellation is journaled
  // as its session closes): a client must not wait for its own timeout.
  stopping.abort();
  let grace: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(posts), new Promise((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
  clearTimeout(grace);
  unwatchModern();
  await Promise.all([...entries.values()].map((entry) => entry.transport.close()));
  await modern.close();
  await modernSession.close();
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));

  /** Ends the least recently used session with nothing in progress, if there is one. */
  function evictIdle(): boolean {
    for (const [id, entry] of entries) {
      if (entry.idle.busy) continue;
      context.terminal.note(
        `closing MCP session ${id}: the least recently used idle one (${Math.round((Date.now() - entry.lastUsed) / 1000)} s), to make room for a new client at --max-sessions ${maxSessions}`,
      );
      entries.delete(id);
      entry.idle.stop();
      void entry.transport.close().catch(() => undefined);
      return true;
    }
    return false;
  }
}

/** Why an OpenWorker session could not open, as an OpenWorker error (its code kept). */
function openFailure(error: unknown): OpenWorkerError {
  return error instanceof OpenWorkerError
    ? error
    : new OpenWorkerError(CLI_ERROR_CODES.INTERNAL, error instanceof Error ? error.message : String(error), { cause: error });
}

/** The JSON-RPC error a client gets when its OpenWorker session cannot open: the OpenWorker code leads the message and is `data.code`. */
function refusalError(refusal: OpenWorkerError): { code: number; message: string; data: { code: string } } {
  return { code: -32603, message: `${refusal.code}: ${refusal.message}`, data: { code: refusal.code } };
}

/**
 * The path of a request target, or `undefined` when it does not parse as a URL (`//`,
 * `http://[::1/mcp`): any local process can send one, and it is the client's mistake (400),
 * not the server's (`new URL` throws, which would be a 500).
 */
function pathOf(target: string | undefined): string | undefined {
  const base = "http://127.0.0.1";
  return URL.canParse(target ?? "/", base) ? new URL(target ?? "/", base).pathname : undefined;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A request body over {@link MAX_BODY_BYTES}: answered 413. */
class BodyTooLarge extends Error {
  constructor() {
    super(`the request body is over ${MAX_BODY_BYTES} bytes (4 MiB), the limit of this server`);
  }
}

/** What {@link readJson} answers for a body that is not JSON. */
const NOT_JSON = Symbol("not JSON");

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    return NOT_JSON;
  }
}

function reply(response: ServerResponse, status: number, code: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}
