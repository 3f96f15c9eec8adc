import { SdkHttpError, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import type { McpProviderDefinition, StdioProviderDefinition, StreamableHttpProviderDefinition } from "@openworker/registry";
import { OpenWorkerError } from "@openworker/tools-sdk";
import type { CallPath } from "../call/call-channel.js";
import type { CleanupFailure, CleanupLedger } from "../cleanup.js";
import { MCP_ERROR_CODES } from "../codes.js";
import type { ResolvedOptions } from "../options.js";
import { placedCommand } from "../process/placement.js";
import { ChildProcessTransport, OVERSIZED_RESPONSE_CODE } from "../process/stdio-transport.js";
import { redact } from "../redact.js";
import { resourceOf, StoredAuthorization } from "./authorization.js";
import { clientSecretOf, type ConnectAttempt } from "./authorize-once.js";
import { boundedFetch, isConnectionRefused } from "./bounded-fetch.js";

// The bridge answers a request itself, on the transport, when the SDK transport will not.
// The codes are in JSON-RPC's implementation-defined server-error range; the answer's
// `data` is a marker object only the bridge can have made, which is what the call path
// checks, so a server's own error with the same code is never taken for one.
const SESSION_NOT_FOUND_CODE = -32098;
const STREAM_ENDED_CODE = -32097;
const NO_ANSWER_CODE = -32096;
const SESSION_NOT_FOUND_MESSAGE = "the server no longer knows the MCP session (HTTP 404); the request was not processed";
/** `data` of the bridge's answer to a request whose POST was answered 404: the server never processed it. */
export const SESSION_NOT_FOUND: unknown = Object.freeze({ bridge: "session-not-found" });
/** `data` of the bridge's answer to a request whose event stream ended with no answer and nothing to resume from. */
export const STREAM_ENDED: unknown = Object.freeze({ bridge: "stream-ended" });
/** `data` of the bridge's answer to a call whose POST was answered without its answer (JSON for another id, a bare 202). */
export const NO_ANSWER: unknown = Object.freeze({ bridge: "no-answer" });

/** A provider's transport, and how to end what it opened (a process tree, a remote session). */
export interface ProviderTransport {
  readonly transport: Transport;
  /** Ends the process tree or the remote session; a failure to confirm it is returned, never thrown (M4). */
  closeRemote(): Promise<CleanupFailure | undefined>;
}

/** What the HTTP transport reports to the connection it serves, once that exists. */
export interface TransportLink {
  owner(): { readonly calls: CallPath; readonly sessionLost: boolean; remoteSessionLost(): void } | undefined;
  /** Whether the last event-stream GET's connection was refused. */
  getRefused(refused: boolean): void;
}

/** A stdio provider's process tree, started (through the sandbox launcher when placed there) with its termination tracked by `ledger`. */
export function stdioTransport(definition: StdioProviderDefinition, options: ResolvedOptions, ledger: CleanupLedger): ProviderTransport {
  const namespace = definition.namespace;
  // A sandboxed provider starts through the host's launcher, or not at all (fail closed).
  const command = placedCommand(
    {
      namespace,
      program: definition.program,
      args: definition.args,
      env: { ...options.baseEnv, ...definition.env },
      cwd: definition.cwd,
      ...(definition.sandbox === undefined ? {} : { sandbox: definition.sandbox }),
    },
    definition.placement,
    options.sandbox,
  );
  const stdio = new ChildProcessTransport({
    program: command.program,
    args: command.args,
    env: command.env,
    ...(command.cwd === undefined ? {} : { cwd: command.cwd }),
    maxMessageBytes: options.maxMessageBytes,
    maxStdinBacklogBytes: options.maxStdinBacklogBytes,
    closeGraceMs: options.closeGraceMs,
    ...(options.onStderr ? { onStderr: (text: string) => options.onStderr?.(namespace, text) } : {}),
    onTermination: (termination) =>
      ledger.track(
        termination.then((report) =>
          report.confirmed
            ? undefined
            : {
                namespace,
                message: `process tree of ${stdio.pid ?? "?"} not confirmed gone after SIGKILL (still running: ${report.survivors.join(", ")})`,
              },
        ),
      ),
  });
  return {
    transport: stdio,
    closeRemote: async () => {
      await stdio.terminate();
      return undefined; // the termination itself is tracked through onTermination
    },
  };
}

/**
 * A streamable-HTTP provider's client transport: bounded responses, the bridge's own
 * answers where the SDK transport gives none, and the provider's OAuth (M8).
 */
export async function httpTransport(
  definition: StreamableHttpProviderDefinition,
  options: ResolvedOptions,
  secrets: readonly string[],
  attempt: ConnectAttempt,
  link: TransportLink,
): Promise<ProviderTransport> {
  const namespace = definition.namespace;
  let url: URL;
  try {
    url = new URL(definition.url);
  } catch (cause) {
    throw new OpenWorkerError(MCP_ERROR_CODES.providerInvalid, `MCP provider "${namespace}": url is not a valid URL`, { cause, details: { namespace } });
  }
  // fetch refuses a URL with credentials, so such a provider could never connect, and its
  // error would carry them (E6). The registry refuses it; a definition may come another way.
  if (url.username !== "" || url.password !== "") {
    throw new OpenWorkerError(
      MCP_ERROR_CODES.providerInvalid,
      `MCP provider "${namespace}": url must not carry credentials (user:password@); pass them in "headers" instead`,
      { details: { namespace } },
    );
  }
  // What the SDK transport does not act on is answered here, through the transport's own
  // message handler, for the requests the POST carried: a response or event past
  // maxMessageBytes (a limit breach, as for stdio's dropped lines), a 404 to the session
  // (the server forgot it: the connection ends), an event stream that ended with nothing
  // to resume from (no answer can come).
  const answer = (ids: readonly (string | number)[], code: number, message: string, data?: unknown) => {
    for (const id of ids) http.onmessage?.({ jsonrpc: "2.0", id, error: { code, message, data } });
  };
  const authorization = options.authorization;
  // A host with an interactive step says where the user comes back, before any flow.
  const redirect = authorization?.authorize !== undefined && definition.oauth?.grant !== "client_credentials" ? await authorization.redirectUrl?.() : undefined;
  const authProvider =
    authorization === undefined
      ? undefined
      : new StoredAuthorization(
          namespace,
          resourceOf(url),
          authorization.store,
          definition.oauth,
          redirect,
          authorization.clientName ?? "OpenWorker",
          clientSecretOf(definition),
        );
  attempt.authorization = authProvider;
  const http: StreamableHTTPClientTransport = new StreamableHTTPClientTransport(url, {
    ...(authProvider === undefined ? {} : { authProvider }),
    requestInit: { headers: { ...definition.headers } },
    fetch: boundedFetch(options.maxMessageBytes, {
      oversized: (ids, message) => answer(ids, OVERSIZED_RESPONSE_CODE, message),
      sessionNotFound: (ids) => {
        answer(ids, SESSION_NOT_FOUND_CODE, SESSION_NOT_FOUND_MESSAGE, SESSION_NOT_FOUND);
        link.owner()?.remoteSessionLost();
      },
      streamEnded: (ids, message) => answer(ids, STREAM_ENDED_CODE, message, STREAM_ENDED),
      // Only calls still waiting: the SDK's own requests (initialize, listings) were answered
      // or have their own bounds, and an answer for an id it no longer knows is an error to it.
      unanswered: (ids, message) =>
        answer(
          ids.filter((id) => link.owner()?.calls.waiting(id) === true),
          NO_ANSWER_CODE,
          message,
          NO_ANSWER,
        ),
      getRefused: link.getRefused,
      ...(authProvider === undefined ? {} : { insufficientScope: (scope: string | undefined) => authProvider.refusedForScope(scope) }),
    }),
  });
  attempt.transport = http;
  const closeRemote = async (): Promise<CleanupFailure | undefined> => {
    let failure: CleanupFailure | undefined;
    // A session the server forgot (404) is gone already: nothing to terminate.
    if (http.sessionId !== undefined && link.owner()?.sessionLost !== true) {
      // A service that takes the DELETE and never answers (frozen, hung) must not hold
      // the close for ever: past closeGraceMs the termination is unconfirmed (M4), and
      // closing the transport below aborts the request.
      let timer: NodeJS.Timeout | undefined;
      const unanswered = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the service did not answer the DELETE within ${options.closeGraceMs} ms (closeGraceMs)`)),
          options.closeGraceMs,
        );
      });
      try {
        await Promise.race([http.terminateSession(), unanswered]);
      } catch (error) {
        // A refused connection means the local service is down, and its sessions with it;
        // 404 means the server no longer knows the session (the SDK takes 405 as done too).
        if (!isConnectionRefused(error) && httpStatus(error) !== 404) {
          failure = { namespace, message: redact(`remote MCP session not terminated: ${(error as Error).message}`, secrets) };
        }
      } finally {
        clearTimeout(timer);
      }
    }
    await http.close().catch(() => {});
    return failure;
  };
  return { transport: http, closeRemote };
}

/** A definition of a transport the bridge does not speak (it came around the registry's checks). */
export function unknownTransport(definition: McpProviderDefinition): never {
  const namespace = definition.namespace;
  throw new OpenWorkerError(
    MCP_ERROR_CODES.providerInvalid,
    `MCP provider "${namespace}" has transport ${JSON.stringify((definition as { transport?: unknown }).transport)}; use "stdio" or "streamable_http"`,
    { details: { namespace } },
  );
}

/** The HTTP status of an SDK transport error (`SdkHttpError`), if it has one. */
export function httpStatus(error: unknown): number | undefined {
  return SdkHttpError.isInstance(error) && typeof error.data?.status === "number" ? error.data.status : undefined;
}
