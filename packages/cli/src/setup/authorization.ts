import { createServer, type Server } from "node:http";
import path from "node:path";
import type { McpAuthorizationOptions, McpAuthorizationRequest } from "@openworker/mcp-bridge";
import type { CommandContext } from "../cli/command.js";

/** Where the CLI keeps MCP providers' OAuth tokens: `<workspace>/.openworker/mcp-tokens.json` (mode 0600). */
export function tokenStorePath(context: CommandContext): string {
  return path.join(context.globals.workspace, ".openworker", "mcp-tokens.json");
}

/**
 * The CLI's OAuth set-up for MCP providers (M8): the token store in the workspace and,
 * when `interactive`, the host step — it prints the authorization URL on stderr and
 * receives the redirect on a loopback port (127.0.0.1, a port the system gives, path
 * `/callback`), opened when a provider first needs it and closed by `close()`. `"during
 * calls"`: a command with a person at its terminal (`run`, `call`), whose step runs when a
 * provider asks for more scopes mid-call (step-up); its port never keeps the process up.
 */
export async function mcpAuthorization(
  context: CommandContext,
  interactive: boolean | "during calls",
): Promise<{ readonly options: McpAuthorizationOptions; close(): Promise<void> }> {
  const { FileTokenStore } = await import("@openworker/mcp-bridge");
  const store = new FileTokenStore(tokenStorePath(context));
  const howToAuthorize = authorizeHint(context.program);
  if (interactive === false) return { options: { store, clientName: "OpenWorker CLI", howToAuthorize }, close: async () => {} };
  const receiver = new LoopbackReceiver(interactive === "during calls");
  return {
    options: {
      store,
      clientName: "OpenWorker CLI",
      howToAuthorize,
      redirectUrl: () => receiver.url(),
      authorize: (request) => {
        context.terminal.note(
          `MCP provider "${request.namespace}" needs your authorization. Open this URL in a browser, sign in and approve:\n  ${request.authorizationUrl.href}`,
        );
        return receiver.next(request);
      },
    },
    close: () => receiver.close(),
  };
}

/** The CLI's words for authorizing a provider, in the bridge's `MCP_AUTHORIZATION_REQUIRED` message. */
export function authorizeHint(program: string): (namespace: string) => string {
  return (namespace) => `run \`${program} auth login ${namespace}\` first (outside a turn)`;
}

/** Receives authorization redirects on 127.0.0.1. */
class LoopbackReceiver {
  private server: Server | undefined;
  private listening: Promise<string> | undefined;
  private waiting: { resolve(url: string): void } | undefined;

  /** `unref`: the port does not keep the process running (a command ends when its work does). */
  constructor(private readonly unref = false) {}

  url(): Promise<string> {
    this.listening ??= new Promise<string>((resolve, reject) => {
      const server = createServer((request, response) => {
        const url = new URL(request.url ?? "/", "http://127.0.0.1");
        if (url.pathname !== "/callback") {
          response.writeHead(404).end();
          return;
        }
        response.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        response.end("The authorization reached the OpenWorker CLI. You can close this window.\n");
        const address = server.address() as { port: number };
        this.waiting?.resolve(`http://127.0.0.1:${address.port}${request.url ?? "/"}`);
        this.waiting = undefined;
      });
      this.server = server;
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/callback`));
      if (this.unref) server.unref();
    });
    return this.listening;
  }

  /** The next redirect, or the request's signal's reason. */
  next(request: McpAuthorizationRequest): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const onAbort = () => reject(request.signal.reason instanceof Error ? request.signal.reason : new Error("the authorization was abandoned"));
      if (request.signal.aborted) return onAbort();
      request.signal.addEventListener("abort", onAbort, { once: true });
      this.waiting = {
        resolve: (url) => {
          request.signal.removeEventListener("abort", onAbort);
          resolve(url);
        },
      };
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
