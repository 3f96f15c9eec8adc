import type { ClientCapabilities, InputRequest, ServerContext } from "@modelcontextprotocol/server";
import type { ResolvedTool } from "@openworker/bundle-resolver";
import type { CallReport, ElicitationAnswer, ElicitationRequest, Session } from "@openworker/runtime";
import type { JsonValue, ProgressEvent } from "@openworker/tools-sdk";
import { CLI_VERSION } from "../cli/version.js";
import { servedResult } from "./call-result.js";
import { clientAnswer, clientName, declares, declined, legacyClientElicitor, notDeclared } from "./client-elicitation.js";
import type { Ask, ParkedCall, ParkedCalls, ParkedState } from "./parked-calls.js";
import type { McpSdk } from "./sdk.js";
import type { ServedCatalog } from "./served-catalog.js";

/** What the MCP server says about itself in `initialize`: this package's name and version. */
export const MCP_SERVER_INFO = Object.freeze({ name: "openworker", version: CLI_VERSION });

/** The logger name of the server's own log messages (`notifications/message`). */
const LOGGER = "openworker";

/** What a tool server needs from the one serving it. */
export interface ToolServerHost {
  /** The OpenWorker session the calls run in. */
  session(): Promise<Session>;
  /** Told when each call starts and ends, its approval included (an HTTP session must not expire under it). */
  readonly calls?: { begin(): void; end(): void };
  /** Aborted when the server stops: a call still running is answered with an error at once. */
  readonly stopping: AbortSignal;
  /** Tells the clients that the served list changed; by default the server's own `notifications/tools/list_changed`. */
  readonly listChanged?: () => void;
  /**
   * Where calls of 2026-07-28 clients wait for their client's input between rounds; one
   * per host, shared by the servers it builds. Without it (a 2025 MCP session), such a
   * client's calls are never parked and what their providers ask is declined.
   */
  readonly parked?: ParkedCalls;
}

type Log = (level: "debug" | "info" | "warning", text: string) => void;

/**
 * One MCP server over the bundle's selected tools (M11). `tools/list` shows exactly the
 * selection (B2) as {@link ServedCatalog} serves it: names, the selected schemas and what
 * the providers publish beside them. Every `tools/call` goes through `session.callTool`,
 * the same governed pipeline as a model's call: schema validation (E5), the policy and
 * approver (A1), the journal (A3) and the limits (E1-E3). Its progress goes to the client's
 * `progressToken` within E2 (the runtime's bounded reporter is in front), its images only
 * after their consent recheck (T4), and its course (requested, approved or denied, how it
 * ended) to the client's log at the level the client set. A failure is an `isError` result
 * that names its code; nothing bypasses the pipeline. The same server answers every
 * protocol era: the SDK's serving entries speak the era, not the handlers.
 *
 * What a provider asks the user during a call (M9) goes to the client that made the call,
 * when that client declared the elicitation capability for the request's mode; otherwise
 * it is declined for the host, unasked. A 2025-era client is sent `elicitation/create`
 * while its call runs; a 2026-07-28 client gets `input_required` and the call waits for
 * its retry ({@link ParkedCalls}). The runtime checks, journals and bounds each answer.
 */
export function createToolServer(sdk: McpSdk, catalog: ServedCatalog, host: ToolServerHost) {
  const server = new sdk.Server(MCP_SERVER_INFO, {
    capabilities: { tools: { listChanged: true }, logging: {} },
    // A 2025-era call asks its client itself while it runs (`elicitInput`): an input_required
    // answer there would be a fault of this server, and must not be replayed by the SDK.
    inputRequired: { legacyShim: false },
    requestState: {
      verify: (state, context) => {
        if (host.parked === undefined) throw new Error("no call of this server waits for input");
        return host.parked.verify(state, context);
      },
    },
  });
  const listChanged = host.listChanged ?? (() => void server.sendToolListChanged().catch(() => undefined));
  server.setRequestHandler("tools/list", () => ({ tools: catalog.listing as never }));
  server.setRequestHandler("tools/call", async (request, context) => {
    const { name } = request.params;
    const tool = catalog.tool(name);
    if (!tool) {
      return {
        isError: true,
        content: [{ type: "text" as const, text: `Error UNKNOWN_TOOL: no served tool is named ${JSON.stringify(name)}; use tools/list` }],
      };
    }
    if (host.stopping.aborted) return stoppingResult();
    const log: Log = (level, text) => void context.mcpReq.log(level, text, LOGGER).catch(() => undefined);
    const progress = progressTo(context);
    const args = (request.params.arguments ?? {}) as JsonValue;
    host.calls?.begin();
    try {
      if (modernEra(server.getNegotiatedProtocolVersion())) return (await roundOf(tool, args, context, log, progress)) as never;
      log("debug", `${tool.qualifiedName}: call requested`);
      const session = await host.session();
      const client = { capabilities: server.getClientCapabilities(), name: clientName(server.getClientVersion()?.name) };
      const call = session.callTool(tool.qualifiedName, args, {
        signal: context.mcpReq.signal,
        onElicitation: legacyClientElicitor(context, client),
        ...(progress.onProgress ? { onProgress: progress.onProgress } : {}),
      });
      const report = await untilStopping(call, host.stopping);
      if (report === undefined) return stoppingResult();
      return (await answer(tool, session, report, context, log, progress.sent)) as never;
    } finally {
      host.calls?.end();
    }
  });

  /**
   * One round of a 2026-07-28 client's call: the first request starts the call, a retry
   * (its `requestState` already verified) answers what the call asked. Either waits for
   * the call's result, or for what it asks next, answered `input_required`.
   */
  async function roundOf(tool: ResolvedTool, args: JsonValue, context: ServerContext, log: Log, progress: Progress) {
    const parked = host.parked;
    const envelope = context.mcpReq.envelope as Record<string, unknown> | undefined;
    const capabilities = envelope?.[sdk.CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
    const state = context.mcpReq.requestState<ParkedState>();
    let call: ParkedCall | undefined;
    if (state !== undefined && parked !== undefined) {
      const who = clientName((envelope?.[sdk.CLIENT_INFO_META_KEY] as { name?: unknown } | undefined)?.name);
      const { inputResponses } = context.mcpReq;
      call = parked.resume(state, tool.qualifiedName, (ask) => {
        const view = sdk.inputResponse(inputResponses, inputKey(ask));
        return view.kind === "elicit" ? clientAnswer(view, who) : declined("the MCP client's retry carried no answer to the request for input");
      });
      if (call === undefined) throw new sdk.ProtocolError(-32602, "Invalid or expired requestState", { reason: "invalid_request_state" });
    } else {
      log("debug", `${tool.qualifiedName}: call requested`);
      const session = await host.session();
      if (parked === undefined) {
        const report = await untilStopping(session.callTool(tool.qualifiedName, args, { signal: context.mcpReq.signal }), host.stopping);
        return report === undefined ? stoppingResult() : answer(tool, session, report, context, log, progress.sent);
      }
      call = parked.start(session, tool.qualifiedName, args);
    }
    for (;;) {
      const turn = await call.next(context.mcpReq.signal, host.stopping, progress.onProgress);
      if (turn.kind === "stopping") return stoppingResult();
      if (turn.kind === "settled") return answer(tool, call.session, await turn.report, context, log, progress.sent);
      const inputRequests: Record<string, InputRequest> = {};
      const asked = turn.asks.filter((ask) => {
        const entry = declares(capabilities, ask.request.mode) ? inputRequestOf(sdk, ask.request) : notDeclared(ask.request.mode);
        if ("action" in entry) ask.answer(entry);
        else inputRequests[inputKey(ask)] = entry;
        return !("action" in entry);
      });
      const live = call.park(asked);
      if (live.length === 0) continue;
      const requestState = await parked!.seal(call, live, context);
      await Promise.all(progress.sent);
      return sdk.inputRequired({ inputRequests: Object.fromEntries(live.map((ask) => [inputKey(ask), inputRequests[inputKey(ask)]!])), requestState });
    }
  }

  /** The served result of a call that ended: its course to the client's log, its images after their recheck. */
  async function answer(tool: ResolvedTool, session: Session, report: CallReport, context: ServerContext, log: Log, sent: Promise<void>[]) {
    logCourse(log, tool.qualifiedName, report);
    const images = await session.releaseImages(report.images, { signal: context.mcpReq.signal });
    if (catalog.follow(session)) listChanged();
    await Promise.all(sent);
    return servedResult(tool, report, images);
  }
  return server;
}

/** The key of a request for input in `inputRequests` and the retry's `inputResponses`. */
function inputKey(ask: Ask): string {
  return `elicitation-${ask.number}`;
}

/** A request for input as the client is asked it, or the decline of one the SDK cannot put into the protocol. */
function inputRequestOf(sdk: McpSdk, request: ElicitationRequest): InputRequest | ElicitationAnswer {
  try {
    if (request.mode === "url") return sdk.inputRequired.elicitUrl({ message: request.message, url: request.url ?? "" });
    return sdk.inputRequired.elicit({ message: request.message, requestedSchema: (request.requestedSchema ?? {}) as never });
  } catch (error) {
    return declined(`the request for input cannot be put to the MCP client (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** Whether a server instance serves the 2026-07-28 revision (or a later one): the 2025 revisions have no `input_required`. */
function modernEra(version: string | undefined): boolean {
  return version !== undefined && version >= "2026-07-28";
}

/** The progress of one request: a listener when the client asked for it (a `progressToken`), and the notifications sent. */
interface Progress {
  readonly onProgress: ((event: ProgressEvent) => void) | undefined;
  /** Awaited before the answer: a client stops listening for a token once its request is answered. */
  readonly sent: Promise<void>[];
}

function progressTo(context: ServerContext): Progress {
  const token = context.mcpReq._meta?.progressToken;
  const sent: Promise<void>[] = [];
  const onProgress =
    token === undefined
      ? undefined
      : progressForwarder(
          (params) =>
            void sent.push(context.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, ...params } }).catch(() => undefined)),
        );
  return { onProgress, sent };
}

/** The answer to a call the server's stop overtook: the call itself is cancelled and journaled as the session closes. */
function stoppingResult() {
  return {
    isError: true,
    content: [
      {
        type: "text" as const,
        text: "Error CLI_INTERRUPTED: the MCP server is stopping; the call was cancelled (it may have had effects) and was not retried",
      },
    ],
  };
}

/** The call's report, or undefined when the server starts stopping first. */
function untilStopping(call: Promise<CallReport>, stopping: AbortSignal): Promise<CallReport | undefined> {
  if (stopping.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const stop = () => resolve(undefined);
    stopping.addEventListener("abort", stop, { once: true });
    call.then(
      (report) => {
        stopping.removeEventListener("abort", stop);
        resolve(report);
      },
      (error: unknown) => {
        stopping.removeEventListener("abort", stop);
        reject(error);
      },
    );
  });
}

/** What the client's log is told of a call that ended: its approval, then its outcome. */
function logCourse(log: Log, qualifiedName: string, report: CallReport): void {
  const { approval } = report;
  if (approval !== undefined) {
    const who = approval.who === undefined ? "" : ` (${approval.who})`;
    log("info", `${qualifiedName}: ${approval.approved ? "approved" : "denied"} by ${approval.by}${who}${approval.reason ? `: ${approval.reason}` : ""}`);
  }
  log(report.isError ? "warning" : "info", `${qualifiedName}: ${report.outcome.replace("_", " ")}${report.code === undefined ? "" : ` (${report.code})`}`);
}

/**
 * A progress listener that sends each event the runtime accepted (E2 bounds it) as MCP
 * progress: `progress` must grow with every notification, so an event without a figure
 * counts one step, and one whose figure does not grow is sent as one step past the last.
 */
function progressForwarder(send: (params: { progress: number; total?: number; message?: string }) => void): (event: ProgressEvent) => void {
  let last = 0;
  return (event) => {
    const figure = typeof event.progress === "number" && Number.isFinite(event.progress) && event.progress > last ? event.progress : last + 1;
    last = figure;
    send({
      progress: figure,
      ...(typeof event.total === "number" && Number.isFinite(event.total) ? { total: event.total } : {}),
      ...(typeof event.message === "string" ? { message: event.message } : {}),
    });
  };
}
