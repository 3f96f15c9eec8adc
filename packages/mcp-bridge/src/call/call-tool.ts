import { CallToolResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ProgressReporter } from "@openworker/tools-sdk";
import { LIMITS } from "@openworker/tools-sdk";
import { boundErrorMessage, FAULT_CODES } from "@openworker/tools-sdk/execution";
import { MCP_ERROR_CODES } from "../codes.js";
import type { ProviderConnection } from "../connection/connection.js";
import { OVERSIZED_RESPONSE_CODE } from "../process/stdio-transport.js";
import { normalizeCallResult, type SettledCall } from "./result.js";

/** One call, ready to send: the catalog and session checks already passed. */
export interface ProviderCall {
  readonly connection: ProviderConnection;
  readonly remoteName: string;
  readonly args: Record<string, unknown> | undefined;
  readonly timeoutMs: number | undefined;
  /** Aborted by the caller (cancellation). */
  readonly signal: AbortSignal | undefined;
  /** Registers the call's cancellation with its session (closing it settles the call); returns the unregistration. */
  readonly onSessionClose: (cancel: () => void) => () => void;
  /** Undefined when nobody listens: then no progress token is requested. */
  readonly progress: ProgressReporter | undefined;
}

type Race =
  | { readonly kind: "result"; readonly value: unknown }
  | { readonly kind: "error"; readonly error: unknown }
  | { readonly kind: "cancelled"; readonly why: string }
  | { readonly kind: "crashed" };

/**
 * Sends one `tools/call` and settles it (E1–E4): progress goes to the bounded reporter,
 * cancellation and timeout abort the SDK request (which sends `notifications/cancelled`
 * and rejects at once, whether or not the server ever answers), and a provider that
 * dies mid-call fails the call as `crashed`. Never retried, never replayed.
 */
export async function callProvider(call: ProviderCall): Promise<SettledCall> {
  const { connection, remoteName } = call;
  const timeoutMs = Math.min(call.timeoutMs ?? LIMITS.callTimeoutMs, LIMITS.callTimeoutMs);
  const reporter = call.progress;
  // The SDK never removes the abort listener it adds to a request's signal, so a
  // caller's long-lived signal (one per turn) is relayed through a per-call one.
  const controller = call.signal ? new AbortController() : undefined;

  const race = await new Promise<Race>((resolve) => {
    let settled = false;
    const settle = (value: Race) => {
      if (settled) return;
      settled = true;
      call.signal?.removeEventListener("abort", onCancel);
      stopWatchingSession();
      stopWatchingEnd();
      resolve(value);
    };
    const onCancel = () => {
      controller?.abort(new Error("the call was cancelled"));
      settle({ kind: "cancelled", why: "the call was cancelled" });
    };
    call.signal?.addEventListener("abort", onCancel, { once: true });
    // Closing the session closes the connection, which rejects the request too.
    const stopWatchingSession = call.onSessionClose(() => settle({ kind: "cancelled", why: "the session closed during the call" }));
    const stopWatchingEnd = connection.whenEnded(() => settle({ kind: "crashed" }));
    connection.client
      .request({ method: "tools/call", params: { name: remoteName, arguments: call.args ?? {} } }, CallToolResultSchema, {
        ...(controller ? { signal: controller.signal } : {}),
        // E1: the SDK's timer sends notifications/cancelled and rejects with RequestTimeout.
        timeout: timeoutMs,
        ...(reporter === undefined
          ? {}
          : {
              onprogress: (progress: { progress: number; total?: number; message?: string }) => {
                reporter.report({
                  progress: progress.progress,
                  ...(progress.total === undefined ? {} : { total: progress.total }),
                  ...(progress.message === undefined ? {} : { message: progress.message }),
                });
              },
            }),
      })
      .then(
        (value) => settle({ kind: "result", value }),
        (error: unknown) => settle({ kind: "error", error }),
      );
  });

  const where = `MCP tool "${remoteName}" of provider "${connection.namespace}"`;
  switch (race.kind) {
    case "result":
      return normalizeCallResult(race.value as Parameters<typeof normalizeCallResult>[0]);
    case "cancelled":
      return { outcome: "cancelled", error: { code: FAULT_CODES.cancelled, message: `${where}: ${race.why}; the server was sent notifications/cancelled` } };
    case "crashed":
      return crashed(call, where);
    case "error":
      if (error(race.error).code === ErrorCode.RequestTimeout) {
        return { outcome: "timed_out", error: { code: FAULT_CODES.timedOut, message: `${where} ran past its ${timeoutMs} ms bound; it was cancelled and not retried` } };
      }
      return fromError(call, where, race.error);
  }
}

function error(value: unknown): { code?: unknown } {
  return value instanceof McpError ? value : {};
}

function crashed(call: ProviderCall, where: string): SettledCall {
  return {
    outcome: "crashed",
    error: {
      code: MCP_ERROR_CODES.providerCrashed,
      message: `${where} failed: ${call.connection.endReason ?? "the provider's connection closed"} during the call; ` +
        "the call was not replayed, and the provider restarts at the session's next discovery",
    },
  };
}

function fromError(call: ProviderCall, where: string, error: unknown): SettledCall {
  const { connection } = call;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.ConnectionClosed || !connection.live) return crashed(call, where);
    if (error.code === OVERSIZED_RESPONSE_CODE) {
      // E3: the transport dropped the response line for its size and answered for it.
      const message = `${where}: ${connection.describe(error)}`;
      const breach = { limit: "resultBytes" as const, actual: 0, max: LIMITS.resultBytes, message };
      return { outcome: "limit_exceeded", breach, error: { code: FAULT_CODES.limitExceeded, message } };
    }
    return {
      outcome: "failed",
      error: { code: MCP_ERROR_CODES.requestFailed, message: boundErrorMessage(`${where} was refused by the provider: ${connection.describe(error)}`) },
    };
  }
  if (!connection.live) return crashed(call, where);
  if (isSchemaError(error)) {
    return { outcome: "crashed", error: { code: MCP_ERROR_CODES.resultInvalid, message: boundErrorMessage(`${where} returned a result that is not an MCP CallToolResult: ${connection.describe(error)}`) } };
  }
  // Anything else is the transport failing under the call (an unreachable HTTP service).
  connection.fail(`the provider could not be reached (${connection.describe(error)})`);
  return {
    outcome: "crashed",
    error: {
      code: MCP_ERROR_CODES.providerUnreachable,
      message: boundErrorMessage(`${where} failed: ${connection.describe(error)}; the call was not replayed, and the provider reconnects at the session's next discovery`),
    },
  };
}

function isSchemaError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "ZodError";
}
