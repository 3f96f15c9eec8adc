import { ProtocolError } from "@modelcontextprotocol/client";
import type { ProgressReporter } from "@openworker/tools-sdk";
import { LIMITS } from "@openworker/tools-sdk";
import { boundErrorMessage, FAULT_CODES } from "@openworker/tools-sdk/internal/execution";
import { MCP_ERROR_CODES } from "../codes.js";
import { isConnectionRefused } from "../connection/bounded-fetch.js";
import type { ProviderConnection } from "../connection/connection.js";
import type { ScopeStepUp, StepUpMark } from "../connection/step-up.js";
import { NO_ANSWER, SESSION_NOT_FOUND, STREAM_ENDED } from "../connection/transports.js";
import { OVERSIZED_RESPONSE_CODE } from "../process/stdio-transport.js";
import type { ChannelSettlement } from "./call-channel.js";
import type { McpElicitationOutcome, McpElicitor } from "./elicitation.js";
import { callAsTask } from "./task-call.js";
import { failedCall, normalizeCallResult, type SettledCall } from "./result.js";
import { parseCallToolResult, type OutputContract } from "./validate.js";

/** One call, ready to send: the catalog and session checks already passed. */
export interface ProviderCall {
  readonly connection: ProviderConnection;
  readonly remoteName: string;
  readonly args: Record<string, unknown> | undefined;
  /** The call's bound: the provider's (M10), or lower when the caller asked. */
  readonly timeoutMs: number;
  /** Aborted by the caller (cancellation). */
  readonly signal: AbortSignal | undefined;
  /** Undefined when nobody listens: then no progress token is requested. */
  readonly progress: ProgressReporter | undefined;
  /** The tool's `outputSchema` from the session's catalog entry; null when it declares none. */
  readonly output: OutputContract | null;
  /** Run it as an MCP task (M10): the tool asks for or allows tasks, and the connection runs them. */
  readonly asTask?: boolean;
  /** Answers the provider's elicitations during this call (M9). */
  readonly onElicitation?: McpElicitor | undefined;
  readonly onElicitationAnswered?: ((outcome: McpElicitationOutcome) => void) | undefined;
}

const EMPTY_ARGS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/**
 * Sends one `tools/call` and settles it (E1–E4): progress goes to the bounded reporter,
 * cancellation and timeout send `notifications/cancelled` and settle the call at once,
 * whether or not the server ever answers, and a provider that dies mid-call fails the
 * call as `crashed`. The result is validated against the MCP schema before it is
 * normalized. Never retried, never replayed.
 */
export async function callProvider(call: ProviderCall): Promise<SettledCall> {
  const { connection, remoteName, output } = call;
  // A result that cannot be checked is not worth the call's effects: refused before sending.
  const unusable = output?.compile();
  if (unusable !== undefined) return failedCall(MCP_ERROR_CODES.outputInvalid, `${where(call)} was not called: ${unusable}`);
  const { timeoutMs } = call;
  // M9: with elicitation on, the call is one a provider's request for user input may belong to.
  const inFlight = connection.elicitation?.enter(call.onElicitation, call.onElicitationAnswered, call.signal);
  const request = { name: remoteName, args: call.args ?? EMPTY_ARGS, timeoutMs, signal: call.signal, progress: call.progress, elicitation: inFlight?.route };
  let settlement: ChannelSettlement;
  try {
    const send = (bound: number) =>
      call.asTask === true ? callAsTask(connection.client, { ...request, timeoutMs: bound }) : connection.calls.call({ ...request, timeoutMs: bound });
    const stepUp = connection.stepUp;
    const mark = stepUp?.mark();
    settlement = await send(timeoutMs);
    if (stepUp !== undefined && mark !== undefined && settlement.kind === "send_failed" && stepUp.refused(settlement.error, mark)) {
      const resent = await withWiderScopes(call, stepUp, mark, settlement.error, send);
      if (!("kind" in resent)) return resent;
      settlement = resent;
    }
  } finally {
    inFlight?.end();
  }
  if (settlement.kind === "result") {
    const parsed = parseCallToolResult(settlement.value);
    if (parsed.ok) {
      // The server broke its own contract: a tool failure the model is told about, the turn goes on.
      const broken = output?.check(parsed.result);
      if (broken !== undefined) return failedCall(MCP_ERROR_CODES.outputInvalid, `${where(call)} ${broken}`);
      const settled = normalizeCallResult(parsed.result);
      // A result the bridge cannot use is named with its tool, as the malformed ones are.
      if (settled.error?.code !== MCP_ERROR_CODES.resultInvalid) return settled;
      return { outcome: settled.outcome, error: { code: settled.error.code, message: boundErrorMessage(`${where(call)}: ${settled.error.message}`) } };
    }
    return {
      outcome: "crashed",
      error: {
        code: MCP_ERROR_CODES.resultInvalid,
        message: boundErrorMessage(`${where(call)} returned a result that is not an MCP CallToolResult: ${connection.describe(parsed.problem)}`),
      },
    };
  }
  return settleFault(call, settlement, timeoutMs);
}

/**
 * M8: a call the provider refused for insufficient scope (HTTP 403: it did not run it)
 * is sent once more after the host's step got a token with the wider scopes; refused
 * again, it fails without asking again. Task calls are not resent: their refusal may
 * come from a poll of a task that runs.
 */
async function withWiderScopes(
  call: ProviderCall,
  stepUp: ScopeStepUp,
  mark: StepUpMark,
  refusal: unknown,
  send: (timeoutMs: number) => Promise<ChannelSettlement>,
): Promise<ChannelSettlement | SettledCall> {
  if (call.asTask === true) {
    return failedCall(
      MCP_ERROR_CODES.authorizationFailed,
      `${where(call)} was refused for insufficient scope (it needs ${stepUp.missing}, which its token lacks); a task call is never resent, so no wider authorization was asked for`,
    );
  }
  const started = performance.now();
  const outcome = await stepUp.authorize(mark, refusal, call.signal, call.timeoutMs);
  if (outcome.kind === "cancelled") {
    return {
      outcome: "cancelled",
      error: { code: FAULT_CODES.cancelled, message: `${where(call)} was cancelled while the host asked for wider scopes; the provider did not run it` },
    };
  }
  // The step's words name the provider and the scopes: calls waiting for one step share them.
  if (outcome.kind === "failed") return failedCall(outcome.error.code, outcome.error.message);
  const left = Math.floor(call.timeoutMs - (performance.now() - started));
  if (left < MIN_RESEND_MS) {
    return failedCall(
      MCP_ERROR_CODES.authorizationFailed,
      `${where(call)} was not called: the authorization of ${stepUp.missing} took its ${call.timeoutMs} ms bound, and the provider had not run it`,
    );
  }
  const again = stepUp.mark();
  const settlement = await send(left);
  if (settlement.kind === "send_failed" && stepUp.refused(settlement.error, again)) {
    return failedCall(
      MCP_ERROR_CODES.authorizationFailed,
      `${where(call)} was refused for insufficient scope again after the user's authorization (it needs ${stepUp.missing}, which the new token lacks); ` +
        "the provider did not run it, and the host was not asked again",
    );
  }
  return settlement;
}

/** A resend with less time left than this is not worth sending. */
const MIN_RESEND_MS = 50;

function where(call: ProviderCall): string {
  return `MCP tool "${call.remoteName}" of provider "${call.connection.namespace}"`;
}

function settleFault(call: ProviderCall, settlement: Exclude<ChannelSettlement, { kind: "result" }>, timeoutMs: number): SettledCall {
  const { connection } = call;
  switch (settlement.kind) {
    case "cancelled":
      return {
        outcome: "cancelled",
        error: { code: FAULT_CODES.cancelled, message: `${where(call)}: ${settlement.why}; the server was sent notifications/cancelled` },
      };
    case "timed_out":
      return {
        outcome: "timed_out",
        error: { code: FAULT_CODES.timedOut, message: `${where(call)} ran past its ${timeoutMs} ms bound; it was cancelled and not retried` },
      };
    case "crashed":
      return crashed(call);
    case "error": {
      // Answers the bridge made itself (see the connection), before the connection's state:
      // both end it.
      if (settlement.data === SESSION_NOT_FOUND) {
        // HTTP 404: the server never processed the call, so it had no effect; resending it
        // would be a replay all the same (E4).
        return failedCall(
          MCP_ERROR_CODES.remoteSessionExpired,
          `${where(call)} was not called: the server no longer knows its MCP session (HTTP 404: the service restarted or expired the session), ` +
            "so it never processed the call; the call was not resent, and the next call or discovery starts a new session",
        );
      }
      if (settlement.data === STREAM_ENDED) {
        // One POST's stream ending (a proxy's idle timeout on a long call) says nothing of
        // the session: only this call is lost, the connection and its other calls go on. An
        // outage shows on the next request (a refused connection, a 404).
        return {
          outcome: "crashed",
          error: {
            code: MCP_ERROR_CODES.providerUnreachable,
            message: boundErrorMessage(
              `${where(call)} failed: ${settlement.message}; the server had received the call, so it may have had effects; it was not replayed`,
            ),
          },
        };
      }
      if (settlement.data === NO_ANSWER) {
        // The server took the call and answered its POST with something else than its answer:
        // a protocol fault of the provider, which may have acted on the call.
        return {
          outcome: "crashed",
          error: {
            code: MCP_ERROR_CODES.resultInvalid,
            message: boundErrorMessage(
              `${where(call)} failed: ${settlement.message}; the server had received the call, so it may have had effects; it was not replayed`,
            ),
          },
        };
      }
      // An error answer came from the server, whatever its code: -32000 is the usual generic
      // server error of JSON-RPC libraries (and also the SDK's local "connection closed",
      // which never arrives as an answer). Only a connection that is gone makes it a crash.
      if (!connection.live) return crashed(call);
      const error = new ProtocolError(settlement.code, settlement.message, settlement.data);
      if (settlement.code === OVERSIZED_RESPONSE_CODE) {
        // E3: the transport dropped the response line for its size and answered for it.
        const message = `${where(call)}: ${connection.describe(error)}`;
        const breach = { limit: "resultBytes" as const, actual: 0, max: LIMITS.resultBytes, message };
        return { outcome: "limit_exceeded", breach, error: { code: FAULT_CODES.limitExceeded, message } };
      }
      return {
        outcome: "failed",
        error: { code: MCP_ERROR_CODES.requestFailed, message: boundErrorMessage(`${where(call)} was refused by the provider: ${connection.describe(error)}`) },
      };
    }
    case "send_failed": {
      if (isConnectionRefused(settlement.error)) {
        // Refused: the request never left the host, so it had no effect (not a fault, E4),
        // whichever of several calls refused at once ended the connection first.
        connection.fail(`the provider refused the connection (${connection.describe(settlement.error)})`);
        return failedCall(
          MCP_ERROR_CODES.providerUnavailable,
          `${where(call)} was not called: the provider refused the connection (${connection.describe(settlement.error)}); ` +
            "the request never reached it, and the provider reconnects at the session's next discovery",
        );
      }
      if (!connection.live) return crashed(call);
      // The transport failed under the call (an unreachable HTTP service).
      connection.fail(`the provider could not be reached (${connection.describe(settlement.error)})`);
      return {
        outcome: "crashed",
        error: {
          code: MCP_ERROR_CODES.providerUnreachable,
          message: boundErrorMessage(
            `${where(call)} failed: ${connection.describe(settlement.error)}; the call was not replayed, and the provider reconnects at the session's next discovery`,
          ),
        },
      };
    }
  }
}

function crashed(call: ProviderCall): SettledCall {
  // A process that ended crashed; a service that went away is unreachable, and is
  // reconnected to rather than restarted.
  const process = call.connection.runsProcess;
  return {
    outcome: "crashed",
    error: {
      code: process ? MCP_ERROR_CODES.providerCrashed : MCP_ERROR_CODES.providerUnreachable,
      message:
        `${where(call)} failed: ${call.connection.endReason ?? "the provider's connection closed"} during the call; ` +
        `the call was not replayed, and the provider ${process ? "restarts" : "reconnects"} at the session's next discovery`,
    },
  };
}
