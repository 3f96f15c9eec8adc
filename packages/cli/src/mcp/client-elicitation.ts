import { randomUUID } from "node:crypto";
import type { ClientCapabilities, ElicitRequestFormParams, ElicitResult, ServerContext } from "@modelcontextprotocol/server";
import type { ElicitationAnswer, ElicitationRequest, ElicitationValue, Elicitor } from "@openworker/runtime";

/** Who the journal names when `serve --mcp` answers a provider's request for input itself. */
export const SERVED_HOST = "serve --mcp";

/**
 * The elicitor `serve --mcp` opens its runtime with, so providers are told they may ask
 * (M9). Every served call answers with its own client's elicitor in its place; this one
 * answers only a request no served call owns, and declines it.
 */
export const servedElicitor: Elicitor = () => declined("serve --mcp forwards a provider's request for input only to the MCP client of the call it belongs to");

/** A decline that `serve --mcp` gave, not a person. */
export function declined(reason: string): ElicitationAnswer {
  return { action: "decline", decidedBy: "host", who: SERVED_HOST, reason };
}

/** The decline of a request in a mode the call's client did not declare: it is never asked. */
export function notDeclared(mode: ElicitationRequest["mode"]): ElicitationAnswer {
  return declined(`the MCP client did not declare the elicitation capability for ${mode} mode, so it cannot be asked`);
}

/**
 * Whether a client's capabilities cover an elicitation mode. An empty `elicitation: {}`
 * is form mode only (the 2025-06-18 shape); URL mode must be declared as `url`.
 */
export function declares(capabilities: ClientCapabilities | undefined, mode: ElicitationRequest["mode"]): boolean {
  const elicitation = capabilities?.elicitation as { readonly form?: unknown; readonly url?: unknown } | undefined;
  if (elicitation === null || typeof elicitation !== "object") return false;
  if (mode === "url") return elicitation.url !== undefined;
  return elicitation.form !== undefined || Object.keys(elicitation).length === 0;
}

/** The client's answer as the runtime takes it: given by a person at the client, named by the client's own name. */
export function clientAnswer(result: { readonly action: string; readonly content?: unknown }, who: string): ElicitationAnswer {
  if (result.action === "accept") {
    const content = result.content;
    // The runtime checks the content against the schema and declines what does not match.
    return content === undefined || content === null
      ? { action: "accept", who, decidedBy: "person" }
      : { action: "accept", content: content as Readonly<Record<string, ElicitationValue>>, who, decidedBy: "person" };
  }
  if (result.action === "cancel") return { action: "cancel", who, decidedBy: "person" };
  if (result.action === "decline") return { action: "decline", who, decidedBy: "person" };
  return declined(`the MCP client answered with an unknown action ${JSON.stringify(String(result.action).slice(0, 40))}`);
}

/** How the journal names a client: the name it gave, at most 100 characters. */
export function clientName(name: unknown): string {
  return typeof name === "string" && name.trim() !== "" ? `MCP client ${name.trim().slice(0, 100)}` : "MCP client";
}

/** The longest timer Node.js keeps (about 24.8 days): the bridge's own bound ends the request first. */
const UNBOUNDED_MS = 2_147_483_647;

/**
 * The elicitor of one call of a 2025-era client (a connection that began with
 * `initialize`): each request of the provider becomes an `elicitation/create` to that
 * client, sent on the call's own stream (`relatedRequestId`), while the call runs. The
 * request's signal (the bridge's `elicitationTimeoutMs`, the call's end or cancellation)
 * withdraws it, which the SDK tells the client (`notifications/cancelled`). A mode the
 * client did not declare is declined without asking.
 */
export function legacyClientElicitor(
  context: ServerContext,
  client: { readonly capabilities: ClientCapabilities | undefined; readonly name: string },
): Elicitor {
  return async (request) => {
    if (!declares(client.capabilities, request.mode)) return notDeclared(request.mode);
    const params =
      request.mode === "url"
        ? { mode: "url" as const, message: request.message, url: request.url ?? "", elicitationId: randomUUID() }
        : { mode: "form" as const, message: request.message, requestedSchema: (request.requestedSchema ?? {}) as ElicitRequestFormParams["requestedSchema"] };
    let result: ElicitResult;
    try {
      result = await context.mcpReq.elicitInput(params, { relatedRequestId: context.mcpReq.id, signal: request.signal, timeout: UNBOUNDED_MS });
    } catch (error) {
      if (request.signal.aborted) return declined("the request for input ended before the MCP client answered");
      return declined(`the MCP client did not answer the request for input (${error instanceof Error ? error.message : String(error)})`);
    }
    return clientAnswer(result, client.name);
  };
}
