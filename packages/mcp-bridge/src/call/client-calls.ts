import { LOG_LEVEL_META_KEY, ProtocolError, SdkError, SdkErrorCode, type Client, type StandardSchemaV1 } from "@modelcontextprotocol/client";
import { onAbort } from "@openworker/tools-sdk/internal/execution";
import { isAuthRefusal } from "../connection/step-up.js";
import type { CallPath, ChannelRequest, ChannelSettlement } from "./call-channel.js";
import { routeRequest } from "./elicitation-routing.js";

/**
 * Sends `tools/call` requests through the SDK's `Client`, for connections on protocol
 * 2026-07-28 (the modern era). There every request carries the per-request `_meta`
 * envelope, a result is discriminated by its `resultType` (`input_required` starts
 * another round trip), and on streamable HTTP a call is cancelled by closing its
 * response stream: the SDK does all of that, so the bridge does not write that wire
 * itself. The result reaches the bridge unchecked (see `RAW_RESULT`): the bridge
 * validates and normalizes it as it does every result (`parseCallToolResult`).
 */
export class ClientCalls implements CallPath {
  /** Calls in flight, with what stops each one. */
  private readonly pending = new Set<AbortController>();

  /** `logs`: ask for the server's log messages of `info` and above (the per-request level of 2026-07-28). */
  constructor(
    private readonly client: Client,
    private readonly logs: boolean,
  ) {}

  async call(request: ChannelRequest): Promise<ChannelSettlement> {
    const stop = new AbortController();
    let why: string | undefined;
    const cancel = (reason: string) => {
      why ??= reason;
      stop.abort(new Error(reason));
    };
    const stopListening = request.signal ? onAbort(request.signal, () => cancel("the call was cancelled")) : undefined;
    this.pending.add(stop);
    // The SDK bounds each request of an `input_required` flow, not the wait for the user
    // between them: with elicitation the call's own bound is kept here (M10).
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    if (request.elicitation !== undefined) {
      routeRequest(stop.signal, request.elicitation);
      timer = setTimeout(() => {
        timedOut = true;
        stop.abort(new Error("the call ran past its time bound"));
      }, request.timeoutMs);
    }
    const { progress } = request;
    try {
      const params = { name: request.name, arguments: request.args, ...(this.logs ? { _meta: { [LOG_LEVEL_META_KEY]: "info" } } : {}) };
      const value = await this.client.request({ method: "tools/call", params }, RAW_RESULT, {
        signal: stop.signal,
        timeout: request.timeoutMs,
        // Each round of `input_required` is a request of its own: together they keep the call's bound.
        maxTotalTimeout: request.timeoutMs,
        ...(progress
          ? {
              onprogress: (update) => {
                // The SDK marks each `input_required` round as progress of its own; the provider said nothing.
                if (update.total === undefined && typeof update.message === "string" && SDK_ROUND.test(update.message)) return;
                progress.report({
                  progress: update.progress,
                  ...(typeof update.total === "number" ? { total: update.total } : {}),
                  ...(typeof update.message === "string" ? { message: update.message } : {}),
                });
              },
            }
          : {}),
      });
      return { kind: "result", value };
    } catch (error) {
      if (timedOut) return { kind: "timed_out" };
      if (why !== undefined) return { kind: "cancelled", why };
      return settlementOf(error);
    } finally {
      clearTimeout(timer);
      this.pending.delete(stop);
      stopListening?.();
    }
  }

  /** Every id may be the SDK's: an answer the bridge makes for one it does not know is ignored there. */
  waiting(): boolean {
    return true;
  }

  cancelAll(why: string): void {
    for (const stop of this.pending) stop.abort(new Error(why));
  }

  /** The SDK settles its requests itself when the connection closes. */
  endAll(): void {}
}

/** The message of the progress the SDK's client reports for each round of an `input_required` flow. */
const SDK_ROUND = /^Fulfilling input required by '[^']*' \(round \d+\)$/;

function settlementOf(error: unknown): ChannelSettlement {
  // The transport's authorization path did not send it, or gave up on a 403 (M8): the call may step up.
  if (isAuthRefusal(error) && (!SdkError.isInstance(error) || error.code === SdkErrorCode.ClientHttpForbidden)) return { kind: "send_failed", error };
  if (ProtocolError.isInstance(error)) return { kind: "error", code: error.code, message: error.message, data: error.data };
  if (SdkError.isInstance(error)) {
    switch (error.code) {
      case SdkErrorCode.RequestTimeout:
        return { kind: "timed_out" };
      case SdkErrorCode.ConnectionClosed:
        return { kind: "crashed" };
      case SdkErrorCode.NotConnected:
      case SdkErrorCode.SendFailed:
        return { kind: "send_failed", error: (error as { cause?: unknown }).cause ?? error };
      default:
        // A round of `input_required` the bridge cannot fulfil, a result kind it does not know:
        // the server answered, and the call cannot go on.
        return { kind: "error", code: 0, message: error.message, data: undefined };
    }
  }
  return { kind: "send_failed", error };
}

/** Accepts any result as it came: the bridge checks it itself. */
export const RAW_RESULT: StandardSchemaV1<unknown, unknown> = {
  "~standard": { version: 1, vendor: "openworker", validate: (value: unknown) => ({ value }) },
};
