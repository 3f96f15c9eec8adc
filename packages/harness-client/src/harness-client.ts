import { spawn, type ChildProcess } from "node:child_process";
import type { McpInventoryRequest } from "@openworker/mcp-bridge";
import type {
  ApprovalRequest,
  Approver,
  CallReport,
  ElicitationRequest,
  Elicitor,
  McpToolInventory,
  ModelCatalogEntry,
  ModelReadiness,
  RuntimeEvent,
  TurnResult,
} from "@openworker/runtime";
import type { JsonValue } from "@openworker/tools-sdk";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { JsonRpcPeer } from "./json-rpc.js";

/** An approval the harness asks the host for (`approval.request`) as it travels: the runtime's request, less its signal. */
export type HarnessApprovalRequest = Omit<ApprovalRequest, "signal">;

/** What an MCP provider asks the user during a call (`elicitation.request`) as it travels: the runtime's request, less its signal. */
export type HarnessElicitationRequest = Omit<ElicitationRequest, "signal">;

/** How to start the harness child. */
export interface HarnessClientOptions {
  /** The host entry to re-run. Default: `process.argv[1]`, this very host (the re-exec rule). */
  readonly entry?: string;
  /** Global options for the child (`--journal`, `--workspace`, `--script`, `--provider`…), placed after `serve --stdio`. */
  readonly args?: readonly string[];
  readonly cwd?: string;
  /** The child's environment. Default: this process's. */
  readonly env?: NodeJS.ProcessEnv;
  /** The child's stderr (progress, diagnostics). Default `"inherit"`. */
  readonly stderr?: "inherit" | "ignore";
  /** Receives every runtime event of every session. */
  readonly onEvent?: (event: RuntimeEvent) => void;
  /**
   * Answers approvals. Default: deny (fail closed). The runtime's `Approver` shape, so the
   * same approver serves an embedded runtime: `request.signal` aborts when the harness
   * abandons the approval (`$/cancelRequest`: the turn was cancelled, the runtime's approval
   * timeout passed) or the harness child goes away. Close the prompt then; a later answer
   * is ignored.
   */
  readonly onApproval?: Approver;
  /**
   * Answers what an MCP provider asks the user during a call (a form to fill in, a URL to
   * open). Default: decline. The runtime's `Elicitor` shape: `request.signal` aborts when
   * the harness abandons the request (the call ended, the elicitation timed out) or the
   * child goes away. An answer that is not `accept`/`decline`/`cancel`, or content that
   * does not match the requested schema, declines.
   */
  readonly onElicitation?: Elicitor;
}

/**
 * The host side of `serve --stdio`: starts this host's entry again as a harness child
 * (so the child registers the same native tools, agentd's re-exec rule) and speaks its
 * JSON-RPC protocol. The ExampleApp architecture: the UI process keeps the harness in a
 * separate stdio process.
 *
 * @example
 * ```ts
 * const harness = HarnessClient.spawn({ args: ["--script", "script.json"], onApproval: () => ({ approved: true }) });
 * const { sessionId } = await harness.openSession({ bundle: "examples/coworker" });
 * const turn = await harness.runTurn(sessionId, "What is my battery status?");
 * await harness.close();
 * ```
 */
export class HarnessClient {
  readonly child: ChildProcess;
  readonly #peer: JsonRpcPeer;
  readonly #exited: Promise<number | null>;

  private constructor(child: ChildProcess, options: HarnessClientOptions) {
    this.child = child;
    this.#exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    this.#peer = new JsonRpcPeer(
      child.stdout!,
      child.stdin!,
      {
        request: async (method, params, _id, signal) => {
          if (method === "elicitation.request") {
            if (!options.onElicitation) return { action: "decline", decidedBy: "host", reason: "the host has no elicitor" };
            return options.onElicitation({ ...(params as HarnessElicitationRequest), signal });
          }
          if (method !== "approval.request") throw new OpenWorkerError("METHOD_NOT_FOUND", `the host does not answer ${method}`);
          if (!options.onApproval) return { approved: false, reason: "the host has no approver" };
          return options.onApproval({ ...(params as HarnessApprovalRequest), signal });
        },
        notification: (method, params) => {
          if (method === "event") options.onEvent?.((params as { event: RuntimeEvent }).event);
        },
      },
      // A harness child that went away waits for no approval: its prompt should close.
      { abortOnClose: true },
    );
  }

  /** Starts the harness child: `node <entry> serve --stdio <args…>`. */
  static spawn(options: HarnessClientOptions = {}): HarnessClient {
    const entry = options.entry ?? process.argv[1];
    if (!entry) throw new OpenWorkerError("HARNESS_ENTRY_MISSING", "no host entry to start; pass options.entry");
    const child = spawn(process.execPath, [entry, "serve", "--stdio", ...(options.args ?? [])], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", options.stderr ?? "inherit"],
    });
    return new HarnessClient(child, options);
  }

  /** Any protocol method; rejects with an `OpenWorkerError` carrying the harness's code. */
  request(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    return this.#peer.request(method, params);
  }

  openSession(params: { bundle: string; policy?: unknown; model?: { provider?: string; model?: string }; sessionId?: string; workspace?: string }) {
    return this.request("session.open", params) as Promise<{ sessionId: string; executionIdentity: string; coworker: string; bundleDir: string }>;
  }

  runTurn(sessionId: string, text: string) {
    return this.request("turn.run", { sessionId, text }) as Promise<HarnessTurnResult>;
  }

  /** Cancels the session's running turn, or only the turn `turnId` when given; answers whether one was cancelled. */
  cancelTurn(sessionId: string, turnId?: string): Promise<{ cancelled: boolean }> {
    return this.request("turn.cancel", turnId === undefined ? { sessionId } : { sessionId, turnId }) as Promise<{ cancelled: boolean }>;
  }

  /**
   * One host-driven call. Aborting `options.signal` rejects with `JSON_RPC_CANCELLED` and
   * sends `$/cancelRequest`: the harness cancels the call (journaled cancelled), also when
   * the abort follows the call at once. A signal already aborted rejects at once and sends
   * nothing: no call is made.
   */
  call(sessionId: string, name: string, args: JsonValue | object = {}, options: { signal?: AbortSignal } = {}) {
    return this.#peer.request("call", { sessionId, name, arguments: args }, options.signal) as Promise<HarnessCallReport>;
  }

  closeSession(sessionId: string): Promise<unknown> {
    return this.request("session.close", { sessionId });
  }

  /**
   * The harness's MCP inventory (M5): a session id, or the runtime's whole request
   * (`{sessionId?, serverNames?, sessionDeniedTools?}`); `null` when nothing is bound.
   */
  mcpInventory(request: string | McpInventoryRequest = {}): Promise<McpToolInventory | null> {
    return this.request("inventory.mcp", typeof request === "string" ? { sessionId: request } : { ...request }) as Promise<McpToolInventory | null>;
  }

  models() {
    return this.request("models.list") as Promise<ModelCatalogEntry[]>;
  }

  /** The current readiness of one model (`{ accountType }`), or `null` when there is no observation; never authorization. */
  readiness(provider: string, model: string) {
    return this.request("models.readiness", { provider, model }) as Promise<ModelReadiness | null>;
  }

  /** Closes stdin (the harness closes its runtime, verifying MCP cleanup) and waits for the exit code. */
  async close(): Promise<number | null> {
    this.child.stdin?.end();
    return this.#exited;
  }
}

/** A call report as the harness sends it: images and audio stay in the harness, only their counts travel (audio's when there is some). */
export type HarnessCallReport = Omit<CallReport, "images" | "audio"> & { readonly images: number; readonly audio?: number };

/** A turn result as the harness sends it. */
export type HarnessTurnResult = Omit<TurnResult, "calls"> & { readonly calls: readonly HarnessCallReport[] };
