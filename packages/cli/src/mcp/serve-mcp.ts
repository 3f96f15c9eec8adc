import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Session } from "@openworker/runtime";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { choiceOption, requiredOption, stringOption, type CommandContext } from "../cli/command.js";
import { CLI_ERROR_CODES, EXIT_CODES, usageError } from "../cli/errors.js";
import { terminalApprover, type ApproveMode } from "../setup/approver.js";
import { loadBundleDir, noteUnselectedClassifications } from "../setup/bundle.js";
import { LineReader } from "../setup/lines.js";
import { readPolicyFile } from "../setup/policy.js";
import { openRuntime } from "../setup/runtime.js";
import { inspectSelection } from "../setup/selection.js";
import { IdleExpiry } from "./idle-expiry.js";
import { checkLocalRequest } from "./local-request.js";
import { loadMcpSdk, type McpSdk } from "./sdk.js";
import { McpStdioTransport } from "./stdio-transport.js";
import { createToolServer } from "./tool-server.js";

/**
 * `serve --mcp`: the bundle's selected tools as an MCP server, over stdio or streamable
 * HTTP on 127.0.0.1. Each MCP client session is one OpenWorker session (its own journal
 * chain and execution identity). Runs until stdin closes (stdio) or the command is asked to
 * stop (SIGINT, SIGTERM, SIGHUP: `context.signal`), then closes its sessions and runtime.
 */
export async function serveMcp(context: CommandContext): Promise<number> {
  const httpPort = portOption(stringOption(context, "http"));
  const mode = choiceOption<ApproveMode>(context, "approve", "no");
  if (mode === "ask" && httpPort === undefined) {
    throw usageError("serve --mcp: --approve ask needs a terminal, and on stdio stdin is the MCP transport; use --approve yes|no, or --http PORT");
  }
  for (const name of ["max-sessions", "idle-timeout"]) {
    if (httpPort === undefined && stringOption(context, name) !== undefined) throw usageError(`serve --mcp: --${name} applies to --http (stdio serves one client)`);
  }
  const limits = { maxSessions: maxSessionsOption(stringOption(context, "max-sessions")), idleTimeoutSeconds: idleTimeoutOption(stringOption(context, "idle-timeout")) };
  const bundle = await loadBundleDir(requiredOption(context, "bundle"));
  const policyFile = stringOption(context, "policy");
  const policy = policyFile === undefined ? {} : await readPolicyFile(policyFile);
  if (policyFile !== undefined) noteUnselectedClassifications(context.terminal, bundle, policy, policyFile);
  const sdk = await loadMcpSdk();

  // stdin is the MCP transport in stdio mode: a person can only be asked over HTTP.
  let reader: LineReader | undefined;
  const prompter = httpPort !== undefined && context.stdin.isTTY ? () => (reader ??= new LineReader(context.stdin, process.stderr)) : undefined;
  const runtime = await openRuntime(context, { approver: terminalApprover(mode, context.terminal, prompter), needsModel: false });
  const openSession = () => runtime.openSession({ bundle, policy });
  try {
    if (httpPort === undefined) await serveStdio(sdk, await openSession(), context);
    else await serveHttp(sdk, await servedTools(context, bundle), openSession, context, httpPort, limits);
    return EXIT_CODES.ok;
  } finally {
    reader?.close();
    await runtime.close();
  }
}

/**
 * The tools an HTTP server lists, resolved once before it listens, with every problem of
 * the bundle reported (the served selection must be exact, M2). Each client's session
 * then resolves its own selection when it calls.
 */
async function servedTools(context: CommandContext, bundle: Awaited<ReturnType<typeof loadBundleDir>>): Promise<Parameters<typeof createToolServer>[1]> {
  const report = await inspectSelection(context.registry, bundle, { discover: true, signal: context.signal, sandbox: context.sandbox, terminal: context.terminal });
  if (report.problems.length > 0) {
    for (const problem of report.problems) context.terminal.note(`problem ${problem.code}: ${problem.message}`);
    throw new OpenWorkerError(CLI_ERROR_CODES.BUNDLE_DOES_NOT_RESOLVE, `${bundle.dir}: ${report.problems.length} problem(s); \`tools check --bundle\` lists them`, { details: { bundleDir: bundle.dir } });
  }
  return report.tools;
}

async function serveStdio(sdk: McpSdk, session: Session, context: CommandContext): Promise<void> {
  // One client, one session: its own preparation is the served selection (M2). It may wait
  // on a slow provider: a stop meanwhile ends it (and that provider, M4) instead of
  // serving once it is done.
  const prepared = await session.prepare({ signal: context.signal }).catch((error: unknown) => {
    // Any other failure propagates; the runtime's close closes the session either way.
    if (context.signal.aborted) return undefined;
    throw error;
  });
  if (prepared === undefined || context.signal.aborted) return session.close();
  const { tools } = prepared;
  const server = createToolServer(sdk, tools, () => Promise.resolve(session));
  const transport = new McpStdioTransport(sdk, context.stdin, context.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
    context.stdin.once("end", resolve);
    context.stdin.once("close", resolve);
    context.signal.addEventListener("abort", () => resolve(), { once: true });
    if (context.signal.aborted) resolve();
  });
  await server.connect(transport);
  context.terminal.note(`serving ${tools.length} tool(s) over MCP stdio`);
  await closed;
  await server.close();
  await session.close();
}

async function serveHttp(
  sdk: McpSdk,
  tools: Parameters<typeof createToolServer>[1],
  openSession: () => Promise<Session>,
  context: CommandContext,
  requestedPort: number,
  { maxSessions, idleTimeoutSeconds }: HttpLimits,
): Promise<void> {
  type Entry = { transport: InstanceType<McpSdk["StreamableHTTPServerTransport"]>; session: Promise<Session>; idle: IdleExpiry };
  const entries = new Map<string, Entry>();
  let port = requestedPort;
  const http = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (response.headersSent) return;
      if (error instanceof BodyTooLarge) reply(response, 413, -32600, error.message);
      else reply(response, 500, -32603, error instanceof Error ? error.message : String(error));
    });
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
    if (!sdk.isInitializeRequest(body)) {
      reply(response, 400, -32000, "no MCP session: the first request must be initialize");
      return;
    }
    // Only live sessions are in `entries` (an expired one has left it). At the bound a new
    // client is refused rather than an idle session evicted: any local process could
    // otherwise push out a client that is still there between its calls.
    if (entries.size >= maxSessions) {
      reply(
        response,
        503,
        -32000,
        `too many MCP sessions (${maxSessions}, each with its own OpenWorker session and MCP processes); end one with DELETE, wait for an abandoned one to expire (idle ${idleTimeoutSeconds} s, --idle-timeout), or restart with a higher --max-sessions`,
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
    const transport: Entry["transport"] = new sdk.StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Awaited by the transport before it hands the initialize on, so the open is over
      // (or failed) by the time the initialize is answered. The entry is set first: an
      // opening session holds its slot against --max-sessions.
      onsessioninitialized: async (id) => {
        entries.set(id, { transport, session: sessionOf(), idle });
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
          refusal = error instanceof OpenWorkerError ? error : new OpenWorkerError(CLI_ERROR_CODES.INTERNAL, error instanceof Error ? error.message : String(error), { cause: error });
          context.terminal.note(`refused an MCP client's initialize: its OpenWorker session could not open (${refusal.code}: ${refusal.message})`);
        }
      },
    });
    transport.onclose = () => {
      idle.stop();
      if (transport.sessionId) entries.delete(transport.sessionId);
      void session?.then((opened) => opened.close()).catch(() => undefined);
    };
    await createToolServer(sdk, tools, sessionOf, idle).connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (refusal === undefined || !sdk.isInitializeRequest(message)) return deliver?.(message, extra);
      // The server never sees this initialize: the client gets the session's error under its
      // own request id (code in `error.data.code`), and the MCP session is dropped.
      const { id } = message as unknown as { id: string | number };
      const error = { code: -32603, message: `${refusal.code}: ${refusal.message}`, data: { code: refusal.code } };
      // Closed whether the send worked or not (a client gone meanwhile makes it fail).
      const close = () => transport.close().catch(() => undefined);
      void transport.send({ jsonrpc: "2.0", id, error }).then(close, close);
    };
    idle.begin();
    try {
      await transport.handleRequest(request, response, body);
    } finally {
      idle.end();
    }
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", (error) => reject(new OpenWorkerError(CLI_ERROR_CODES.LISTEN_FAILED, `cannot listen on 127.0.0.1:${requestedPort} (${error.message})`, { cause: error })));
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
  await Promise.all([...entries.values()].map((entry) => entry.transport.close()));
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
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

/** Concurrent MCP sessions over HTTP, by default: each holds an OpenWorker session and its own MCP processes (M4). */
export const DEFAULT_MAX_SESSIONS = 32;

/**
 * Seconds an HTTP client's MCP session may stay idle, by default, before it is closed as a
 * DELETE would close it: long enough for a person's pause between prompts, short enough
 * that clients which went away without DELETE give their slots and processes back.
 */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 30 * 60;

/** What bounds the sessions of `serve --mcp --http`. */
interface HttpLimits {
  readonly maxSessions: number;
  readonly idleTimeoutSeconds: number;
}

function maxSessionsOption(text: string | undefined): number {
  return wholeNumberOption("--max-sessions", text, DEFAULT_MAX_SESSIONS, "a whole number of at least 1");
}

/** No value turns expiry off (as none turns the --max-sessions bound off); the largest, 999999 s, is over 11 days. */
function idleTimeoutOption(text: string | undefined): number {
  return wholeNumberOption("--idle-timeout", text, DEFAULT_IDLE_TIMEOUT_SECONDS, "a whole number of seconds from 1 to 999999");
}

/** 1–999999 (up to six digits), `fallback` when the option is not given; else CLI_USAGE saying it must be `what`. */
function wholeNumberOption(name: string, text: string | undefined, fallback: number, what: string): number {
  if (text === undefined) return fallback;
  const value = /^\d{1,6}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(value) || value < 1) throw usageError(`${name} must be ${what}, got ${JSON.stringify(text)}`);
  return value;
}

function portOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`--http must be a port number 0-65535 (0 picks a free port), got ${JSON.stringify(text)}`);
  return port;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A request body over {@link MAX_BODY_BYTES}: answered 413. */
class BodyTooLarge extends Error {
  constructor() {
    super(`the request body is over ${MAX_BODY_BYTES} bytes (4 MiB), the limit of this server`);
  }
}

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
    return undefined;
  }
}

function reply(response: ServerResponse, status: number, code: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}
