import type { ApprovalAnswer, ApprovalPolicy, ApprovalRequest, ElicitationAnswer, ElicitationRequest, Runtime, Session } from "@openworker/runtime";
import type { McpInventoryRequest } from "@openworker/mcp-bridge";
import { OpenWorkerError, type JsonValue } from "@openworker/tools-sdk";
import { isObject } from "../setup/files.js";
import { parsePolicy } from "../setup/policy.js";
import { callJson, turnJson } from "../setup/report-json.js";
import { HARNESS_METHODS, JSON_RPC_ERRORS } from "@openworker/harness-client";
import { JsonRpcPeer, rpcError } from "@openworker/harness-client/internal";

/**
 * The harness side of `serve --stdio`: one runtime, any number of sessions, driven by a
 * host application over JSON-RPC. Runtime events go to the host as `event`
 * notifications; approvals the policy leaves to a person go to the host as
 * `approval.request` requests, and anything but `{approved: true}` denies (fail closed);
 * what an MCP provider asks the user during a call goes to the host as an
 * `elicitation.request`, and anything but an answer the runtime can pass on declines.
 *
 * It ends when stdin closes, on `shutdown`, or when `signal` aborts (SIGTERM, Ctrl-C).
 * Requests already received are answered first (a stop by signal cancels running turns
 * first); requests that arrive after that are refused with `HARNESS_SHUTTING_DOWN`.
 * Only then does the runtime close.
 */
export class HarnessServer {
  readonly #sessions = new Map<string, Session>();
  readonly #peer: JsonRpcPeer;
  readonly #runtime: Promise<Runtime>;
  readonly #inFlight = new Set<Promise<unknown>>();
  /**
   * Host `call`s in flight, by request id. `session.cancel` stops turns only, and a host
   * call is not a turn: without its own signal a stop would wait for the tool to finish
   * (its effects included). Aborted by a signal stop, `$/cancelRequest` and `turn.cancel`.
   */
  readonly #hostCalls = new Map<number | string, { sessionId: unknown; controller: AbortController }>();
  #stopping = false;
  readonly #signal: AbortSignal | undefined;
  #stop: () => void = () => undefined;
  /** Settles once the harness stopped, every request it took was answered, and the runtime closed: sessions, MCP processes, journal. */
  readonly finished: Promise<void>;

  constructor(
    input: NodeJS.ReadableStream,
    output: NodeJS.WritableStream,
    openRuntime: (host: {
      readonly approver: (request: ApprovalRequest) => Promise<ApprovalAnswer>;
      readonly elicitor: (request: ElicitationRequest) => Promise<ElicitationAnswer>;
    }) => Promise<Runtime>,
    signal?: AbortSignal,
  ) {
    this.#signal = signal;
    const stopped = new Promise<void>((resolve) => (this.#stop = resolve));
    signal?.addEventListener("abort", () => this.#stop(), { once: true });
    if (signal?.aborted) this.#stop();
    const peer = new JsonRpcPeer(input, output, { request: (method, params, id, cancelled) => this.#accept(method, params, id, cancelled) });
    this.#peer = peer;
    const opening = openRuntime({ approver: (request) => this.#askHost(request), elicitor: (request) => this.#askHostToElicit(request) });
    this.#runtime = opening;
    this.finished = (async () => {
      const runtime = await opening;
      await Promise.race([peer.closed, stopped]);
      this.#stopping = true;
      if (signal?.aborted) {
        const why = (signal.reason as Error | undefined)?.message ?? "the harness is stopping";
        for (const session of this.#sessions.values()) session.cancel(why);
        for (const { controller } of this.#hostCalls.values()) controller.abort(signal.reason);
      }
      while (this.#inFlight.size > 0) await Promise.allSettled(this.#inFlight);
      await runtime.close();
    })();
  }

  /** `cancelled`: the peer's signal for this request, aborted by the host's `$/cancelRequest {id}`. */
  #accept(method: string, params: unknown, id: number | string, cancelled: AbortSignal): Promise<unknown> {
    if (this.#stopping) {
      return Promise.reject(
        rpcError(JSON_RPC_ERRORS.SERVER_ERROR, "HARNESS_SHUTTING_DOWN", `the harness is shutting down and takes no new requests (${method} refused)`),
      );
    }
    // Requests after a `shutdown` (even on the same read) are refused, not raced against the close.
    if (method === "shutdown") this.#stopping = true;
    const work = method === "call" ? this.#call(params, id, cancelled) : this.#handle(method, params);
    this.#inFlight.add(work);
    const done = () => void this.#inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  async #handle(method: string, params: unknown): Promise<unknown> {
    const runtime = await this.#runtime;
    const input = isObject(params) ? params : {};
    switch (method) {
      case "session.open":
        return this.#openSession(runtime, input);
      case "turn.run": {
        const session = this.#session(input);
        return turnJson(await session.runTurn(text(input, "text")).catch((error: unknown) => Promise.reject(withHarnessModelHint(runtime, error))));
      }
      case "turn.cancel": {
        const reason = optionalText(input, "reason") ?? "cancelled by the host";
        const turnId = optionalText(input, "turnId");
        const session = this.#session(input);
        const turn = session.cancel(reason, turnId === undefined ? {} : { turnId });
        // Without a turn id, the session's host calls stop too: each runs as a turn of its own.
        const calls = turnId === undefined ? this.#cancelHostCalls(session.id, reason) : false;
        return { cancelled: turn || calls };
      }
      case "session.close": {
        const session = this.#session(input);
        this.#sessions.delete(session.id);
        await session.close();
        return { closed: true };
      }
      case "inventory.mcp":
        return runtime.mcpInventory(inventoryRequest(input)) ?? null;
      case "models.list":
        return runtime.loadModelCatalog();
      case "models.readiness": {
        if (typeof input.provider !== "string" || typeof input.model !== "string") {
          throw paramsInvalid("models.readiness needs params {provider: string, model: string}");
        }
        return runtime.readModelCatalogReadiness({ provider: input.provider, model: input.model }) ?? null;
      }
      case "shutdown":
        setImmediate(() => this.#stop());
        return { shuttingDown: true };
      default:
        throw rpcError(
          JSON_RPC_ERRORS.METHOD_NOT_FOUND,
          "METHOD_NOT_FOUND",
          `unknown method ${JSON.stringify(method)}; methods: ${HARNESS_METHODS.join(", ")}`,
        );
    }
  }

  /**
   * A host `call`. Its controller is registered before anything is awaited: a
   * `$/cancelRequest` or `turn.cancel` in the same read as the call, or a signal stop while
   * the runtime opens, must find it, or the tool would run to its end while the host was
   * told it was cancelled.
   */
  async #call(params: unknown, id: number | string, cancelled: AbortSignal): Promise<unknown> {
    const controller = new AbortController();
    const input = isObject(params) ? params : {};
    // Its session id is checked once the runtime is open; a wrong one matches no turn.cancel meanwhile.
    this.#hostCalls.set(id, { sessionId: input.sessionId, controller });
    const onCancelled = () => controller.abort(new OpenWorkerError("TURN_CANCELLED", "cancelled by the host ($/cancelRequest)"));
    if (cancelled.aborted) onCancelled();
    else cancelled.addEventListener("abort", onCancelled, { once: true });
    // A call taken just before a signal stop swept the others is cancelled the same way.
    if (this.#signal?.aborted) controller.abort(this.#signal.reason);
    try {
      await this.#runtime;
      const session = this.#session(input);
      return callJson(await session.callTool(text(input, "name"), (input.arguments ?? {}) as JsonValue, { signal: controller.signal }));
    } finally {
      cancelled.removeEventListener("abort", onCancelled);
      this.#hostCalls.delete(id);
    }
  }

  /** Cancels the session's host calls in flight; answers whether there was one. */
  #cancelHostCalls(sessionId: string, reason: string): boolean {
    let cancelled = false;
    for (const call of this.#hostCalls.values()) {
      if (call.sessionId !== sessionId || call.controller.signal.aborted) continue;
      call.controller.abort(new OpenWorkerError("TURN_CANCELLED", reason));
      cancelled = true;
    }
    return cancelled;
  }

  async #openSession(runtime: Runtime, input: Record<string, unknown>): Promise<unknown> {
    const bundle = text(input, "bundle");
    const policy: ApprovalPolicy = input.policy === undefined ? {} : parsePolicy(input.policy, "session.open params.policy");
    const model = modelParam(input);
    const sessionId = optionalText(input, "sessionId");
    const workspace = optionalText(input, "workspace");
    const session = await runtime.openSession({
      bundle,
      policy,
      ...(model ? { model } : {}),
      ...(sessionId === undefined ? {} : { sessionId }),
      ...(workspace === undefined ? {} : { workspace }),
    });
    this.#sessions.set(session.id, session);
    session.subscribe((event) => this.#peer.notify("event", { event }));
    return { sessionId: session.id, executionIdentity: session.executionIdentity, coworker: session.bundle.manifest.name, bundleDir: session.bundle.dir };
  }

  #session(input: Record<string, unknown>): Session {
    const sessionId = text(input, "sessionId");
    const session = this.#sessions.get(sessionId);
    if (!session) throw rpcError(JSON_RPC_ERRORS.INVALID_PARAMS, "SESSION_UNKNOWN", `no open session ${JSON.stringify(sessionId)}; open one with session.open`);
    return session;
  }

  async #askHostToElicit(request: ElicitationRequest): Promise<ElicitationAnswer> {
    const { signal, ...question } = request;
    return elicitationAnswer(await this.#peer.request("elicitation.request", question, signal));
  }

  async #askHost(request: ApprovalRequest): Promise<ApprovalAnswer> {
    const { signal, ...question } = request;
    const answer = await this.#peer.request("approval.request", question, signal);
    // A host's rule is journaled as a rule, not as a person (A1), as for an embedded approver.
    const by = isObject(answer) ? answer.decidedBy : undefined;
    const decidedBy: { decidedBy?: "person" | "policy" } = by === "policy" || by === "person" ? { decidedBy: by } : {};
    if (!isObject(answer) || answer.approved !== true) {
      const reason = isObject(answer) && typeof answer.reason === "string" ? answer.reason : "the host did not approve";
      return { approved: false, reason, ...(isObject(answer) && typeof answer.who === "string" ? { who: answer.who } : {}), ...decidedBy };
    }
    return {
      approved: true,
      scope: answer.scope === "session" ? "session" : "once",
      ...(typeof answer.who === "string" ? { who: answer.who } : { who: "host" }),
      ...decidedBy,
    };
  }
}

/**
 * The host's answer to an `elicitation.request`, as the runtime takes it: the action and
 * the form's content as given (the bridge checks them against the schema and declines
 * what does not match), `who` and `decidedBy` for the journal.
 */
function elicitationAnswer(answer: unknown): ElicitationAnswer {
  if (!isObject(answer)) return { action: "decline", decidedBy: "host", reason: "the host did not answer with an object {action, content?, who?}" };
  const who = typeof answer.who === "string" && answer.who !== "" ? { who: answer.who } : {};
  const by = answer.decidedBy;
  const decidedBy: { decidedBy?: "person" | "host" } = by === "host" || by === "person" ? { decidedBy: by } : {};
  if (answer.action === "accept")
    return { action: "accept", ...(answer.content === undefined ? {} : { content: answer.content as never }), ...who, ...decidedBy };
  if (answer.action === "cancel") return { action: "cancel", ...who, ...decidedBy };
  return { action: "decline", ...who, ...decidedBy, ...(typeof answer.reason === "string" ? { reason: answer.reason } : {}) };
}

function text(input: Record<string, unknown>, field: string, label = `params.${field}`): string {
  const value = input[field];
  if (typeof value !== "string" || value === "") throw paramsInvalid(`${label} must be a non-empty string, got ${describeValue(value)}`);
  return value;
}

function describeValue(value: unknown): string {
  if (value === "") return "an empty string";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return value === undefined ? "nothing" : `a ${typeof value}`;
}

/**
 * An optional string param: absent is `undefined`; present, it must be a non-empty string.
 * A wrongly typed value is refused rather than ignored: ignoring it would quietly do
 * something else (a random session id, the default workspace, every session's inventory).
 */
function optionalText(input: Record<string, unknown>, field: string): string | undefined {
  return input[field] === undefined ? undefined : text(input, field);
}

/** `session.open`'s `model`: absent, or `{provider?: string, model?: string}` (a string such as `"openai"` is refused, not dropped). */
function modelParam(input: Record<string, unknown>): { provider?: string; model?: string } | undefined {
  if (input.model === undefined) return undefined;
  const model = input.model;
  if (!isObject(model)) throw paramsInvalid("params.model must be an object {provider?: string, model?: string}");
  const unknown = Object.keys(model).filter((key) => key !== "provider" && key !== "model");
  if (unknown.length > 0)
    throw paramsInvalid(`params.model has unknown field(s) ${unknown.map((key) => JSON.stringify(key)).join(", ")} (allowed: provider, model)`);
  const provider = model.provider === undefined ? undefined : text(model, "provider", "params.model.provider");
  const name = model.model === undefined ? undefined : text(model, "model", "params.model.model");
  return { ...(provider === undefined ? {} : { provider }), ...(name === undefined ? {} : { model: name }) };
}

/**
 * `inventory.mcp`'s params as the runtime's {@link McpInventoryRequest} (M5, seed 004):
 * `{sessionId?, serverNames?: string[], sessionDeniedTools?: {server: string[]}}`. Each is
 * checked by type and an unknown field is refused: a wrongly typed `sessionId` ignored would
 * widen the answer to every session's connections, a misspelt `serverNames` would list
 * servers the control surface may not represent, and a dropped denial would show a tool the
 * session hid.
 */
function inventoryRequest(input: Record<string, unknown>): McpInventoryRequest {
  const unknown = Object.keys(input).filter((key) => key !== "sessionId" && key !== "serverNames" && key !== "sessionDeniedTools");
  if (unknown.length > 0)
    throw paramsInvalid(
      `inventory.mcp params have unknown field(s) ${unknown.map((key) => JSON.stringify(key)).join(", ")} (allowed: sessionId, serverNames, sessionDeniedTools)`,
    );
  const sessionId = optionalText(input, "sessionId");
  const serverNames = input.serverNames === undefined ? undefined : textList(input.serverNames, "params.serverNames");
  let sessionDeniedTools: Record<string, readonly string[]> | undefined;
  if (input.sessionDeniedTools !== undefined) {
    const denied = input.sessionDeniedTools;
    if (!isObject(denied)) throw paramsInvalid(`params.sessionDeniedTools must be an object {serverName: [toolName, …]}, got ${describeValue(denied)}`);
    sessionDeniedTools = Object.fromEntries(
      Object.entries(denied).map(([server, tools]) => [server, textList(tools, `params.sessionDeniedTools[${JSON.stringify(server)}]`)]),
    );
  }
  return {
    ...(sessionId === undefined ? {} : { sessionId }),
    ...(serverNames === undefined ? {} : { serverNames }),
    ...(sessionDeniedTools === undefined ? {} : { sessionDeniedTools }),
  };
}

/** An array of non-empty strings, or `PARAMS_INVALID` naming the field. */
function textList(value: unknown, label: string): string[] {
  if (!Array.isArray(value)) throw paramsInvalid(`${label} must be an array of non-empty strings, got ${describeValue(value)}`);
  const bad = value.findIndex((item) => typeof item !== "string" || item === "");
  if (bad !== -1) throw paramsInvalid(`${label}[${bad}] must be a non-empty string, got ${describeValue(value[bad])}`);
  return value as string[];
}

function paramsInvalid(message: string): OpenWorkerError {
  return rpcError(JSON_RPC_ERRORS.INVALID_PARAMS, "PARAMS_INVALID", message);
}

/**
 * The runtime's `MODEL_PROVIDER_UNKNOWN` for a harness started without a model says to pass
 * `models` to the runtime, which a host driving `serve --stdio` cannot do: the harness's
 * model comes from its command line. Same code (hosts may branch on it), words a host can act on.
 */
function withHarnessModelHint(runtime: Runtime, error: unknown): unknown {
  if (!OpenWorkerError.hasCode(error, "MODEL_PROVIDER_UNKNOWN") || runtime.loadModelCatalog().length > 0) return error;
  return new OpenWorkerError(
    "MODEL_PROVIDER_UNKNOWN",
    "this harness was started without a model, so turn.run has none to ask (session.open, call and the inventories work without one); " +
      "start it with one: `serve --stdio --script FILE` (scripted) or `serve --stdio --base-url URL --model NAME` (an OpenAI-compatible endpoint), " +
      'from a host `HarnessClient.spawn({ args: ["--script", FILE] })` or `HarnessClient.spawn({ args: ["--base-url", URL, "--model", NAME] })`',
    { cause: error },
  );
}
