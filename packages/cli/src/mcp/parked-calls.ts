import { randomBytes, randomUUID } from "node:crypto";
import type { RequestStateCodec, ServerContext } from "@modelcontextprotocol/server";
import type { CallReport, ElicitationAnswer, ElicitationRequest, Session } from "@openworker/runtime";
import type { JsonValue, ProgressEvent } from "@openworker/tools-sdk";
import { declined } from "./client-elicitation.js";
import type { McpSdk } from "./sdk.js";

/**
 * What a `requestState` of `serve --mcp` says: the OpenWorker session, the parked call
 * and the numbers of the requests for input the client's retry answers. It is signed (the
 * client can read it, not change it), bound to `tools/call`, and good for an hour at most:
 * no call outlives its own bound of at most one hour (M10).
 */
export interface ParkedState {
  readonly session: string;
  readonly call: string;
  readonly asked: readonly number[];
}

/** A provider's request for input, as the call's client may be asked it. */
export interface Ask {
  /** Its number within the call: the key of its entry in `inputRequests`. */
  readonly number: number;
  readonly request: ElicitationRequest;
  /** Gives the provider its answer (the first one counts). */
  readonly answer: (answer: ElicitationAnswer) => void;
}

/** What a request that waits on a call gets: the call's report, requests for input, or the server's stop. */
export type Turn =
  { readonly kind: "settled"; readonly report: Promise<CallReport> } | { readonly kind: "asks"; readonly asks: readonly Ask[] } | { readonly kind: "stopping" };

/** Work that keeps a session open (its idle timeout, a stop's wait for answers). */
interface Hold {
  begin(): void;
  end(): void;
}

/** The longest a requestState is good for, in seconds: a call's longest bound (M10). */
const MAX_PARK_SECONDS = 60 * 60;

/**
 * The calls of 2026-07-28 clients that wait for their client's input (M9, M11). That
 * revision has no server-to-client requests: when a provider asks during a served call,
 * the `tools/call` is answered `input_required` with a `requestState` naming the call,
 * which keeps running, parked, until the client retries with its answers. The state is
 * sealed with the SDK's codec under a key of this server alone; a retry is taken only
 * when its state names a call of this server that waits for exactly those answers, so a
 * forged, replayed or stale state is refused (`-32602`, "Invalid or expired requestState").
 *
 * A parked call is bounded as every call is: the bridge's `elicitationTimeoutMs` and the
 * call's own bound end each request for input. One that ends while its client holds the
 * state leaves no client able to receive the call's result, so the call is cancelled.
 */
export class ParkedCalls {
  readonly #calls = new Map<string, ParkedCall>();
  readonly #codec: RequestStateCodec<ParkedState>;
  readonly #stopping: AbortSignal;
  readonly #hold: Hold | undefined;

  /** `hold` is told while a call is parked: no request of its client is in progress then, and its session must stay open. */
  constructor(sdk: McpSdk, stopping: AbortSignal, hold?: Hold) {
    this.#codec = sdk.createRequestStateCodec<ParkedState>({
      key: randomBytes(32),
      ttlSeconds: MAX_PARK_SECONDS,
      bind: (context) => `${context.mcpReq.method}\0${context.sessionId ?? ""}`,
    });
    this.#stopping = stopping;
    this.#hold = hold;
    // The session's close cancels parked calls; nothing waits for them any more.
    stopping.addEventListener("abort", () => {
      for (const call of this.#calls.values()) call.unpark();
    });
  }

  /** Starts a governed call in `session` that may park. */
  start(session: Session, qualifiedName: string, args: JsonValue): ParkedCall {
    const call = new ParkedCall(session, qualifiedName, this.#hold, () => this.#calls.delete(call.id));
    this.#calls.set(call.id, call);
    call.run(args);
    return call;
  }

  /** Seals what a parked call waits for into the `requestState` the client echoes. */
  seal(call: ParkedCall, asked: readonly Ask[], context: ServerContext): Promise<string> {
    return this.#codec.mint({ session: call.session.id, call: call.id, asked: asked.map((ask) => ask.number) }, context);
  }

  /**
   * `ServerOptions.requestState.verify`: the codec's checks (signature, expiry, binding),
   * then that a parked call waits for exactly what the state names. Once the server is
   * stopping the state is passed on: the call is answered as the stop answers every call.
   */
  async verify(state: string, context: ServerContext): Promise<ParkedState> {
    const payload = await this.#codec.verify(state, context);
    if (!this.#stopping.aborted && this.#waiting(payload) === undefined) throw new Error("stale: no parked call waits for these answers");
    return payload;
  }

  /**
   * The parked call a verified state names, given the client's answers (`answerOf`);
   * undefined when it no longer waits for them (another retry answered first, the request
   * for input ended) or the retry names another tool.
   */
  resume(payload: ParkedState, qualifiedName: string, answerOf: (ask: Ask) => ElicitationAnswer): ParkedCall | undefined {
    const call = this.#waiting(payload);
    if (call === undefined || call.qualifiedName !== qualifiedName) return undefined;
    call.resume(answerOf);
    return call;
  }

  #waiting(payload: ParkedState): ParkedCall | undefined {
    const call = this.#calls.get(payload.call);
    return call !== undefined && call.session.id === payload.session && call.awaits(payload.asked) ? call : undefined;
  }
}

/** One served call of a 2026-07-28 client, between the requests of its rounds. */
export class ParkedCall {
  readonly id = randomUUID();
  readonly session: Session;
  readonly qualifiedName: string;
  readonly #controller = new AbortController();
  readonly #hold: Hold | undefined;
  readonly #drop: () => void;
  #report: Promise<CallReport> | undefined;
  #settled = false;
  #count = 0;
  /** Asked by the provider, not yet put to the client. */
  #queued: Ask[] = [];
  /** Put to the client, unanswered: the call is parked while there are any. */
  readonly #outstanding = new Map<number, Ask>();
  #wake: (() => void) | undefined;
  #progress: ((event: ProgressEvent) => void) | undefined;
  #held = false;

  constructor(session: Session, qualifiedName: string, hold: Hold | undefined, drop: () => void) {
    this.session = session;
    this.qualifiedName = qualifiedName;
    this.#hold = hold;
    this.#drop = drop;
  }

  run(args: JsonValue): void {
    const report = this.session.callTool(this.qualifiedName, args, {
      signal: this.#controller.signal,
      onProgress: (event) => this.#progress?.(event),
      onElicitation: (request) => this.#ask(request),
    });
    this.#report = report;
    const settle = () => {
      this.#settled = true;
      this.#drop();
      this.unpark();
      this.#wake?.();
    };
    report.then(settle, settle);
  }

  /** Whether the call waits for exactly these requests for input. */
  awaits(numbers: readonly number[]): boolean {
    return !this.#settled && numbers.length === this.#outstanding.size && numbers.every((number) => this.#outstanding.has(number));
  }

  /** The client's retry: each request it was asked gets its answer. */
  resume(answerOf: (ask: Ask) => ElicitationAnswer): void {
    const asked = [...this.#outstanding.values()];
    this.#outstanding.clear();
    this.unpark();
    for (const ask of asked) ask.answer(answerOf(ask));
  }

  /**
   * Waits, for the client's request in hand, until the call settles or asks for input.
   * The request's cancellation (the client closed its stream) cancels the call.
   * `onProgress` hears the call's progress meanwhile.
   */
  async next(signal: AbortSignal, stopping: AbortSignal, onProgress: ((event: ProgressEvent) => void) | undefined): Promise<Turn> {
    const cancel = () => this.#controller.abort(new Error("the MCP client cancelled the call"));
    const stop = () => this.#wake?.();
    signal.addEventListener("abort", cancel, { once: true });
    stopping.addEventListener("abort", stop, { once: true });
    if (signal.aborted) cancel();
    this.#progress = onProgress;
    try {
      for (;;) {
        if (stopping.aborted) return { kind: "stopping" };
        if (this.#settled) return { kind: "settled", report: this.#report! };
        if (this.#queued.length > 0) return { kind: "asks", asks: this.#queued.splice(0) };
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
      }
    } finally {
      this.#progress = undefined;
      signal.removeEventListener("abort", cancel);
      stopping.removeEventListener("abort", stop);
    }
  }

  /**
   * Parks the call on the asks put to the client, leaving out those that ended meanwhile;
   * answers the ones it parked on (none: there is nothing to ask, and the caller waits on).
   */
  park(asks: readonly Ask[]): Ask[] {
    const live = this.#settled ? [] : asks.filter((ask) => !ask.request.signal.aborted);
    for (const ask of live) this.#outstanding.set(ask.number, ask);
    if (live.length > 0 && !this.#held) {
      this.#held = true;
      this.#hold?.begin();
    }
    return live;
  }

  /** Nothing holds the session for this call any more (its client's retry came, it settled, the server stops). */
  unpark(): void {
    if (!this.#held) return;
    this.#held = false;
    this.#hold?.end();
  }

  #ask(request: ElicitationRequest): Promise<ElicitationAnswer> {
    if (request.signal.aborted || this.#settled) return Promise.resolve(declined("the request for input ended before the MCP client was asked"));
    return new Promise((resolve) => {
      const withdraw = () => this.#withdraw(ask);
      const ask: Ask = {
        number: ++this.#count,
        request,
        answer: (answer) => {
          request.signal.removeEventListener("abort", withdraw);
          resolve(answer);
        },
      };
      request.signal.addEventListener("abort", withdraw, { once: true });
      this.#queued.push(ask);
      this.#wake?.();
    });
  }

  /** A request for input ended (its bound, the call's end, the provider withdrew it) before the client answered. */
  #withdraw(ask: Ask): void {
    this.#queued = this.#queued.filter((queued) => queued !== ask);
    const parked = this.#outstanding.delete(ask.number);
    ask.answer(declined("the request for input ended before the MCP client answered"));
    if (!parked) return;
    // The client holds a state that names it: no retry can resume the call, nor receive its result.
    for (const other of this.#outstanding.values()) other.answer(declined("the call was cancelled: its client can no longer answer"));
    this.#outstanding.clear();
    this.unpark();
    this.#controller.abort(new Error("no MCP client waits for the call: its request for input ended before the client answered"));
  }
}
