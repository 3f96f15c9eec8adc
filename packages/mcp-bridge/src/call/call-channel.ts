import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import type { ProgressReporter } from "@openworker/tools-sdk";
import { onAbort, type AbortListenerRemover } from "@openworker/tools-sdk/internal/execution";
import type { ElicitationRoute } from "./elicitation.js";

/** How one `tools/call` request ended, before it is mapped to a call outcome. */
export type ChannelSettlement =
  | { readonly kind: "result"; readonly value: unknown }
  | { readonly kind: "error"; readonly code: number; readonly message: string; readonly data: unknown }
  | { readonly kind: "cancelled"; readonly why: string }
  | { readonly kind: "timed_out" }
  | { readonly kind: "crashed" }
  | { readonly kind: "send_failed"; readonly error: unknown };

/** One request to send. */
export interface ChannelRequest {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** Undefined when nobody listens: then no progress token is requested. */
  readonly progress: ProgressReporter | undefined;
  /** The call's elicitation route, when the connection answers elicitation (M9). */
  readonly elicitation?: ElicitationRoute;
}

/** Where a connection's `tools/call` requests go: the lean channel, or the SDK's client. */
export interface CallPath {
  /** Sends one `tools/call` and resolves when it settles; never rejects. */
  call(request: ChannelRequest): Promise<ChannelSettlement>;
  /** Whether the call with this request id still waits for its answer. */
  waiting(id: string | number): boolean;
  /** Settles every pending call as cancelled (the session closes) and tells the server. */
  cancelAll(why: string): void;
  /** The connection ended: settles what the transport took as crashed. */
  endAll(): void;
}

interface PendingCall {
  readonly resolve: (settlement: ChannelSettlement) => void;
  readonly timer: NodeJS.Timeout;
  /** Stops listening for the caller's cancellation (see `onAbort`). */
  readonly stopListening: AbortListenerRemover | undefined;
  readonly progress: ProgressReporter | undefined;
  /** The transport took the request (an HTTP POST got its response headers; a line was written). */
  sent: boolean;
}

// The SDK's Protocol numbers its own requests (initialize, tools/list) 0, 1, 2, …; calls
// take ids from a range it never reaches, positive 32-bit integers as most servers expect.
const FIRST_CALL_ID = 1_000_000_000;
const LAST_CALL_ID = 2_147_483_647;

type MessageHandler = NonNullable<Transport["onmessage"]>;

/**
 * Sends `tools/call` requests on a connection's transport itself, beside the SDK's
 * `Client` (which keeps the handshake, listings and notifications). The SDK's request
 * path costs a promise chain, four closures, three map entries and a zod parse of
 * every result per call; this one costs one pending entry and one timer, and the
 * bridge validates the result itself (`parseCallToolResult`). It does what the SDK
 * did for these calls: progress tokens (only when asked), `notifications/cancelled`
 * on cancellation and timeout, and every pending call settled when the connection ends.
 *
 * `attach()` it after `client.connect(transport)`: it wraps the handler the SDK
 * installed and passes on every message that is not about one of its calls.
 */
export class CallChannel implements CallPath {
  private nextId = FIRST_CALL_ID;
  private readonly pending = new Map<number, PendingCall>();
  /** `endAll()` ran: the connection ended, and a request sent from now on cannot be answered. */
  private ended = false;

  constructor(private readonly transport: Transport) {}

  /** Takes over the transport's message handler; call once, after the SDK client connected. */
  attach(): void {
    const forward = this.transport.onmessage;
    this.transport.onmessage = ((message: JSONRPCMessage, extra?: unknown) => {
      if (!this.receive(message)) forward?.(message, extra as Parameters<MessageHandler>[1]);
    }) as MessageHandler;
  }

  /** Sends one `tools/call` and resolves when it settles; never rejects. */
  call(request: ChannelRequest): Promise<ChannelSettlement> {
    const id = this.nextId;
    this.nextId = id === LAST_CALL_ID ? FIRST_CALL_ID : id + 1;
    const { signal, progress } = request;
    const params: Record<string, unknown> = { name: request.name, arguments: request.args };
    if (progress) params._meta = { progressToken: id };
    return new Promise<ChannelSettlement>((resolve) => {
      // E1: at the bound the server is told to stop and the call settles at once.
      const timer = setTimeout(timeOut, request.timeoutMs, this, id);
      // One listener per signal, shared by the calls waiting on it (a session's signal
      // has every call in flight on it).
      const stopListening = signal
        ? onAbort(signal, () => this.stop(id, { kind: "cancelled", why: "the call was cancelled" }, "cancelled by the client"))
        : undefined;
      this.pending.set(id, { resolve, timer, stopListening, progress, sent: false });
      this.send({ jsonrpc: "2.0", id, method: "tools/call", params } as JSONRPCMessage).then(
        () => this.sent(id),
        (error: unknown) => {
          this.settle(id, { kind: "send_failed", error });
        },
      );
    });
  }

  /** Whether the call with this request id still waits for its answer. */
  waiting(id: string | number): boolean {
    return typeof id === "number" && this.pending.has(id);
  }

  /** Settles every pending call as cancelled (the session closes) and tells the server. */
  cancelAll(why: string): void {
    // A Map may drop the entry being visited: iteration goes on with the next one.
    for (const id of this.pending.keys()) this.stop(id, { kind: "cancelled", why }, why);
  }

  /**
   * Settles every pending call the transport took as crashed: the connection ended under
   * them. A call still being sent is left to its send, which tells whether it left the
   * host (a refused HTTP connection: it did not), or crashed once it is taken.
   */
  endAll(): void {
    this.ended = true;
    for (const [id, call] of this.pending) if (call.sent) this.settle(id, { kind: "crashed" });
  }

  private sent(id: number): void {
    const call = this.pending.get(id);
    if (call === undefined) return;
    call.sent = true;
    if (this.ended) this.settle(id, { kind: "crashed" });
  }

  /** Ends one call locally and sends `notifications/cancelled` for it (E4). */
  stop(id: number, settlement: ChannelSettlement, reason: string): void {
    if (!this.settle(id, settlement)) return;
    this.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } }).catch(() => {
      // The connection is gone: nothing is running there any more to cancel.
    });
  }

  // A transport that throws instead of rejecting must not leave a call pending.
  private send(message: JSONRPCMessage): Promise<void> {
    try {
      return this.transport.send(message);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  private settle(id: number, settlement: ChannelSettlement): boolean {
    const call = this.pending.get(id);
    if (!call) return false;
    this.pending.delete(id);
    clearTimeout(call.timer);
    call.stopListening?.();
    call.resolve(settlement);
    return true;
  }

  // True when the message was about one of this channel's calls (handled or stale).
  private receive(message: JSONRPCMessage): boolean {
    const raw = (message as { id?: unknown }).id;
    // Some servers echo a numeric id as a string ("1000000011"); JSON-RPC only asks that it
    // come back as sent, and the SDK's own client accepts it: so does the channel, instead
    // of leaving the call to wait out its time bound.
    const id = typeof raw === "string" && NUMERIC_ID.test(raw) ? Number(raw) : raw;
    if (typeof id === "number") {
      if (id < FIRST_CALL_ID || "method" in message) return false;
      const response = message as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
      if (response.error !== undefined) {
        const error = response.error;
        this.settle(id, {
          kind: "error",
          code: typeof error?.code === "number" ? error.code : 0,
          message: typeof error?.message === "string" ? error.message : "the provider answered with a malformed error",
          data: error?.data,
        });
      } else this.settle(id, { kind: "result", value: response.result });
      // A late answer (after a cancellation or timeout) ends here too.
      return true;
    }
    if (id === undefined && (message as { method?: unknown }).method === "notifications/progress") {
      const params = (message as { params?: { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown } }).params;
      const token = params?.progressToken;
      if (typeof token !== "number" || token < FIRST_CALL_ID) return false;
      const reporter = this.pending.get(token)?.progress;
      if (reporter && typeof params?.progress === "number") {
        reporter.report({
          progress: params.progress,
          ...(typeof params.total === "number" ? { total: params.total } : {}),
          ...(typeof params.message === "string" ? { message: params.message } : {}),
        });
      }
      return true;
    }
    return false;
  }
}

const NUMERIC_ID = /^[1-9]\d{0,9}$/;

function timeOut(channel: CallChannel, id: number): void {
  channel.stop(id, { kind: "timed_out" }, "the call ran past its time bound");
}
