import type { Session } from "@openworker/runtime";
import { tokenStorePath } from "../setup/authorization.js";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { choiceOption, requiredOption, stringOption, type CommandContext } from "../cli/command.js";
import { CLI_ERROR_CODES, EXIT_CODES, usageError } from "../cli/errors.js";
import { terminalApprover, type ApproveMode } from "../setup/approver.js";
import { loadBundleDir, noteUnselectedClassifications } from "../setup/bundle.js";
import { LineReader } from "../setup/lines.js";
import { readPolicyFile } from "../setup/policy.js";
import { openRuntime } from "../setup/runtime.js";
import { inspectSelection } from "../setup/selection.js";
import { servedElicitor } from "./client-elicitation.js";
import { ParkedCalls } from "./parked-calls.js";
import { loadMcpSdk, type McpSdk } from "./sdk.js";
import { serveHttp } from "./serve-http.js";
import { ServedCatalog, watchCatalog, type ToolNames } from "./served-catalog.js";
import { McpStdioTransport } from "./stdio-transport.js";
import { createToolServer } from "./tool-server.js";

/**
 * `serve --mcp`: the bundle's selected tools as an MCP server, over stdio or streamable
 * HTTP on 127.0.0.1, to clients of every protocol era the MCP SDK serves (2026-07-28 and
 * the 2025 revisions). Each MCP client session is one OpenWorker session (its own journal
 * chain and execution identity); on HTTP, 2026-07-28 clients, which have no sessions,
 * share one (see `serve-http.ts`). Runs until stdin closes (stdio) or the command is asked to
 * stop (SIGINT, SIGTERM, SIGHUP: `context.signal`), then closes its sessions and runtime.
 */
export async function serveMcp(context: CommandContext, elicitationTimeoutMs: number): Promise<number> {
  const httpPort = portOption(stringOption(context, "http"));
  const mode = choiceOption<ApproveMode>(context, "approve", "no");
  if (mode === "ask" && httpPort === undefined) {
    throw usageError("serve --mcp: --approve ask needs a terminal, and on stdio stdin is the MCP transport; use --approve yes|no, or --http PORT");
  }
  for (const name of ["max-sessions", "idle-timeout"]) {
    if (httpPort === undefined && stringOption(context, name) !== undefined)
      throw usageError(`serve --mcp: --${name} applies to --http (stdio serves one client)`);
  }
  const toolNames = choiceOption<ToolNames>(context, "tool-names", "alias");
  const limits = {
    maxSessions: maxSessionsOption(stringOption(context, "max-sessions")),
    idleTimeoutSeconds: idleTimeoutOption(stringOption(context, "idle-timeout")),
    toolNames,
  };
  const bundle = await loadBundleDir(requiredOption(context, "bundle"));
  const policyFile = stringOption(context, "policy");
  const policy = policyFile === undefined ? {} : await readPolicyFile(policyFile);
  if (policyFile !== undefined) noteUnselectedClassifications(context.terminal, bundle, policy, policyFile);
  const sdk = await loadMcpSdk();

  // stdin is the MCP transport in stdio mode: a person can only be asked over HTTP.
  let reader: LineReader | undefined;
  const prompter = httpPort !== undefined && context.stdin.isTTY ? () => (reader ??= new LineReader(context.stdin, process.stderr)) : undefined;
  // Providers may ask for input (M9): each served call forwards it to its own client.
  const runtime = await openRuntime(context, {
    approver: terminalApprover(mode, context.terminal, prompter),
    elicitor: servedElicitor,
    elicitationTimeoutMs,
    needsModel: false,
  });
  const openSession = () => runtime.openSession({ bundle, policy });
  try {
    if (httpPort === undefined) await serveStdio(sdk, await openSession(), context, toolNames);
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
async function servedTools(
  context: CommandContext,
  bundle: Awaited<ReturnType<typeof loadBundleDir>>,
): Promise<ConstructorParameters<typeof ServedCatalog>[0]> {
  const report = await inspectSelection(context.registry, bundle, {
    discover: true,
    signal: context.signal,
    sandbox: context.sandbox,
    terminal: context.terminal,
    tokenStore: tokenStorePath(context),
    program: context.program,
  });
  if (report.problems.length > 0) {
    for (const problem of report.problems) context.terminal.note(`problem ${problem.code}: ${problem.message}`);
    throw new OpenWorkerError(
      CLI_ERROR_CODES.BUNDLE_DOES_NOT_RESOLVE,
      `${bundle.dir}: ${report.problems.length} problem(s); \`tools check --bundle\` lists them`,
      { details: { bundleDir: bundle.dir } },
    );
  }
  return report.tools;
}

async function serveStdio(sdk: McpSdk, session: Session, context: CommandContext, toolNames: ToolNames): Promise<void> {
  // One client, one session: its own preparation is the served selection (M2). It may wait
  // on a slow provider: a stop meanwhile ends it (and that provider, M4) instead of
  // serving once it is done.
  const prepared = await session.prepare({ signal: context.signal }).catch((error: unknown) => {
    // Any other failure propagates; the runtime's close closes the session either way.
    if (context.signal.aborted) return undefined;
    throw error;
  });
  if (prepared === undefined || context.signal.aborted) return session.close();
  const catalog = new ServedCatalog(prepared.tools, toolNames);
  const stopping = new AbortController();
  // The servers the SDK's stdio entry built (one per connection): each tells its client of list changes.
  const servers = new Set<ReturnType<typeof createToolServer>>();
  const listChanged = () => {
    for (const server of servers) void server.sendToolListChanged().catch(() => undefined);
  };
  // Calls in flight: a stop answers each with an error, written before the transport closes.
  let inFlight = 0;
  let settled: (() => void) | undefined;
  const calls = {
    begin: () => void (inFlight += 1),
    end: () => {
      inFlight -= 1;
      if (inFlight === 0) settled?.();
    },
  };
  // A parked call (a 2026-07-28 client's, waiting for its answers) is work in flight too; a stop lets it go.
  const parked = new ParkedCalls(sdk, stopping.signal, calls);
  const host = { session: () => Promise.resolve(session), calls, stopping: stopping.signal, listChanged, parked };
  // The SDK's stdio entry decides the era from the client's first message (`server/discover`
  // for 2026-07-28, `initialize` for 2025) and builds the server for it; the transport is
  // ours, since it answers every line (oversized, not JSON).
  const served = sdk.serveStdio(
    () => {
      const server = createToolServer(sdk, catalog, host);
      servers.add(server);
      return server;
    },
    { transport: new McpStdioTransport(sdk, context.stdin, context.stdout) },
  );
  const unwatch = watchCatalog(() => session, catalog, listChanged);
  const closed = new Promise<void>((resolve) => {
    context.stdin.once("end", resolve);
    context.stdin.once("close", resolve);
    context.signal.addEventListener("abort", () => resolve(), { once: true });
    if (context.signal.aborted) resolve();
  });
  context.terminal.note(`serving ${prepared.tools.length} tool(s) over MCP stdio`);
  await closed;
  unwatch();
  stopping.abort();
  if (inFlight > 0) {
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (settled = resolve)), new Promise((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
    clearTimeout(grace);
    // The answers are sent once their handlers returned: one turn later they are written.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await served.close();
  await session.close();
}

/** How long a stop waits for the answers of calls in flight before it closes the transport. */
const STOP_GRACE_MS = 2_000;

/** Concurrent MCP sessions over HTTP, by default: each holds an OpenWorker session and its own MCP processes (M4). */
export const DEFAULT_MAX_SESSIONS = 32;

/**
 * Seconds an HTTP client's MCP session may stay idle, by default, before it is closed as a
 * DELETE would close it: long enough for a pause between prompts, short enough that clients
 * which went away without DELETE give their provider processes back within minutes. (At
 * `--max-sessions`, the least recently used idle session is closed sooner, for a new client.)
 */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 5 * 60;

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
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw usageError(`--http must be a port number 0-65535 (0 picks a free port), got ${JSON.stringify(text)}`);
  return port;
}
