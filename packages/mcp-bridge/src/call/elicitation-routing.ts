import { AsyncLocalStorage } from "node:async_hooks";
import { Client, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";
import { answerElicitation, CallsInFlight, type ElicitationRoute } from "./elicitation.js";

/** The call whose `input_required` round is being fulfilled (2026-07-28). */
const fulfilling = new AsyncLocalStorage<ElicitationRoute>();
/** The route of each 2026-07-28 call in flight, by the signal its SDK request carries. */
const routesBySignal = new WeakMap<AbortSignal, ElicitationRoute>();

/** Ties a 2026-07-28 call's SDK request (by its signal) to the call's route. */
export function routeRequest(signal: AbortSignal, route: ElicitationRoute): void {
  routesBySignal.set(signal, route);
}

type NonComplete = Client["_resolveNonCompleteResult"];

/**
 * The SDK's client, with one addition: on 2026-07-28 the SDK fulfils a call's
 * `input_required` round by dispatching its embedded requests to the client's request
 * handlers, from the response handler, where nothing says which call the round belongs to
 * (on stdio it runs in the context of the transport's reads, not of the call). The round
 * is run inside the call's route (an `AsyncLocalStorage`), found by the request's signal,
 * so the `elicitation/create` handler reaches the elicitor of the call that asked.
 */
export class BridgeClient extends Client {
  protected override _resolveNonCompleteResult(...args: Parameters<NonComplete>): ReturnType<NonComplete> {
    const signal = args[1].options?.signal;
    const route = signal === undefined ? undefined : routesBySignal.get(signal);
    if (route === undefined) return super._resolveNonCompleteResult(...args);
    return fulfilling.run(route, () => super._resolveNonCompleteResult(...args));
  }
}

/**
 * Answers the provider's `elicitation/create` requests (M9) for a client that declared
 * the elicitation capability: a 2026-07-28 round goes to its call's elicitor; a 2025-era
 * request to the connection's one call in flight, declined when several are (it cannot be
 * attributed), refused with a JSON-RPC error when none is.
 */
export function answerElicitations(client: Client, namespace: string, secrets: readonly string[], timeoutMs: number): CallsInFlight {
  const inFlight = new CallsInFlight();
  client.setRequestHandler("elicitation/create", async (request, ctx) => {
    // A 2026-07-28 server has no other way to ask than a call's round.
    const route = fulfilling.getStore() ?? (client.getProtocolEra() === "modern" ? undefined : inFlight.only());
    if (route === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `no call of MCP provider "${namespace}" is running: elicitation is accepted only during one of its tool calls`,
      );
    }
    if (route === "several") return { action: "decline" };
    return answerElicitation(namespace, route, request.params, ctx.mcpReq.signal, timeoutMs, secrets);
  });
  return inFlight;
}
