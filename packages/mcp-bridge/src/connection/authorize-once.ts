import { OpenWorkerError } from "@openworker/tools-sdk";
import type { McpProviderDefinition } from "@openworker/registry";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { MCP_ERROR_CODES } from "../codes.js";
import type { ResolvedOptions } from "../options.js";
import { redact } from "../redact.js";
import type { StoredAuthorization } from "./authorization.js";

/** What one connect attempt set up for a provider's OAuth, for the flow after it (M8). */
export interface ConnectAttempt {
  /** The bridge session the connection belongs to. */
  readonly sessionId: string;
  authorization?: StoredAuthorization | undefined;
  transport?: StreamableHTTPClientTransport | undefined;
}

/** A provider's OAuth client secret, from the environment variable its settings name (never stored in the definition, E6). */
export function clientSecretOf(definition: McpProviderDefinition): string | undefined {
  if (definition.transport !== "streamable_http" || definition.oauth?.clientSecretEnv === undefined) return undefined;
  const secret = process.env[definition.oauth.clientSecretEnv];
  if (secret === undefined || secret === "") {
    throw new OpenWorkerError(
      MCP_ERROR_CODES.authorizationFailed,
      `MCP provider "${definition.namespace}": its OAuth client secret variable ${definition.oauth.clientSecretEnv} is not set; set it in the host's environment`,
      { details: { namespace: definition.namespace } },
    );
  }
  return secret;
}

/** What a host step is for, as its errors say it. */
export interface AuthorizationPurpose {
  /** The `MCP_AUTHORIZATION_REQUIRED` message, when the host has no step. */
  readonly required: string;
  /** What a failed step leaves, after its problem: "its tools are unavailable this turn". */
  readonly consequence: string;
}

/** The purpose of the step a connection runs: a provider whose tools wait for it. */
function connecting(namespace: string, options: ResolvedOptions): AuthorizationPurpose {
  return {
    required: `MCP provider "${namespace}" requires authorization and the host has no token for it; ${howToAuthorize(namespace, options)}; its tools are unavailable this turn`,
    consequence: "its tools are unavailable this turn",
  };
}

/**
 * M8: the host's interactive step for a provider that asked for a user's authorization:
 * the host shows the authorization URL and hands back the redirect, whose `state` must
 * be the flow's; the SDK then exchanges the code (checking `iss`, RFC 9207) and stores
 * the tokens. Bounded by `authorizeTimeoutMs` and the caller's signal. Without a host
 * step the provider is unavailable with `MCP_AUTHORIZATION_REQUIRED`.
 */
export async function authorizeOnce(
  namespace: string,
  attempt: ConnectAttempt,
  options: ResolvedOptions,
  secrets: readonly string[],
  signal: AbortSignal | undefined,
  purpose: AuthorizationPurpose = connecting(namespace, options),
): Promise<void> {
  const authorization = attempt.authorization!;
  const authorize = options.authorization?.authorize;
  if (authorize === undefined || attempt.transport === undefined || authorization.pendingAuthorization === undefined) {
    throw new OpenWorkerError(MCP_ERROR_CODES.authorizationRequired, purpose.required, { details: { namespace } });
  }
  const timeoutMs = options.authorization?.authorizeTimeoutMs ?? 300_000;
  const bound = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])]);
  const failed = (problem: string, cause?: unknown) =>
    new OpenWorkerError(
      MCP_ERROR_CODES.authorizationFailed,
      redact(`MCP provider "${namespace}": authorization failed: ${problem}; ${purpose.consequence}`, secrets),
      {
        ...(cause === undefined ? {} : { cause }),
        details: { namespace },
      },
    );
  let redirect: URL;
  try {
    redirect = new URL(await authorize({ namespace, authorizationUrl: authorization.pendingAuthorization!, signal: bound }));
  } catch (error) {
    if (bound.aborted && signal?.aborted !== true) throw failed(`the host's authorization step did not finish within ${timeoutMs} ms`, error);
    throw failed(`the host's authorization step failed (${(error as Error).message})`, error);
  }
  const params = redirect.searchParams;
  if (params.get("state") !== authorization.expectedState)
    throw failed("the redirect's state does not match the authorization request (a redirect from another flow, or forged)");
  if (params.has("error")) throw failed(`the authorization server refused: ${params.get("error")}`);
  try {
    await attempt.transport.finishAuth(params);
  } catch (error) {
    throw failed(`the authorization code could not be exchanged (${(error as Error).message})`, error);
  }
}

/** The host's words for authorizing `namespace` outside a turn (a throwing or empty answer falls back to the default). */
export function howToAuthorize(namespace: string, options: ResolvedOptions): string {
  try {
    const words = options.authorization?.howToAuthorize?.(namespace);
    if (typeof words === "string" && words.trim() !== "") return words;
  } catch {
    // The default words below.
  }
  return "authorize it with the host first, outside a turn";
}
