import type { CallReport, Session } from "@openworker/runtime";
import type { JsonValue, ProgressEvent } from "@openworker/tools-sdk";
import { CLI_VERSION } from "../cli/version.js";
import { servedResult } from "./call-result.js";
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
}

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
 */
export function createToolServer(sdk: McpSdk, catalog: ServedCatalog, host: ToolServerHost) {
  const server = new sdk.Server(MCP_SERVER_INFO, { capabilities: { tools: { listChanged: true }, logging: {} } });
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
    const log = (level: "debug" | "info" | "warning", text: string) => void context.mcpReq.log(level, text, LOGGER).catch(() => undefined);
    const token = context.mcpReq._meta?.progressToken;
    // Sent notifications are awaited before the result: a client stops listening for a token once the call is answered.
    const sent: Promise<void>[] = [];
    const onProgress =
      token === undefined
        ? undefined
        : progressForwarder(
            (params) =>
              void sent.push(context.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, ...params } }).catch(() => undefined)),
          );
    host.calls?.begin();
    try {
      log("debug", `${tool.qualifiedName}: call requested`);
      const session = await host.session();
      const call = session.callTool(tool.qualifiedName, (request.params.arguments ?? {}) as JsonValue, {
        signal: context.mcpReq.signal,
        ...(onProgress ? { onProgress } : {}),
      });
      const report = await untilStopping(call, host.stopping);
      if (report === undefined) return stoppingResult();
      logCourse(log, tool.qualifiedName, report);
      const images = await session.releaseImages(report.images, { signal: context.mcpReq.signal });
      if (catalog.follow(session)) listChanged();
      await Promise.all(sent);
      return servedResult(tool, report, images) as never;
    } finally {
      host.calls?.end();
    }
  });
  return server;
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
function logCourse(log: (level: "debug" | "info" | "warning", text: string) => void, qualifiedName: string, report: CallReport): void {
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
