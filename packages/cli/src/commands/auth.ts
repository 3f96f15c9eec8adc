import type { McpStoredAuthorization, McpTokenKey } from "@openworker/mcp-bridge";
import type { StreamableHttpProviderDefinition } from "@openworker/registry";
import { OpenWorkerError } from "@openworker/tools-sdk";
import type { CommandContext, CommandSpec } from "../cli/command.js";
import { CLI_ERROR_CODES, EXIT_CODES } from "../cli/errors.js";
import { table } from "../cli/terminal.js";
import { mcpAuthorization, tokenStorePath } from "../setup/authorization.js";
import { providerProgress } from "../setup/provider-progress.js";

const AUTH_DETAILS =
  "OAuth 2.1 for streamable-HTTP MCP providers that require it. Tokens are kept in <workspace>/.openworker/mcp-tokens.json\n" +
  "(mode 0600), bound to the provider and its URL; they never reach the journal, a result or the output. The provider comes\n" +
  "from --servers FILE or the host's own registration.";

/** `auth login <namespace>`: runs the provider's OAuth flow now, outside a turn. */
export const authLogin: CommandSpec = {
  words: ["auth", "login"],
  summary: "Authorize an OAuth-protected MCP provider: print the URL to open, receive the redirect on a loopback port",
  usage: "<namespace> [--json]",
  positionals: { min: 1, max: 1 },
  listing: true,
  options: {},
  details: `${AUTH_DETAILS}\nThe redirect comes back to http://127.0.0.1:<port>/callback on this machine; a provider already authorized is checked and left as it is.`,
  run: async (context) => {
    const definition = httpProvider(context, context.positionals[0]!);
    const { McpBridge, resourceOf } = await import("@openworker/mcp-bridge");
    const authorization = await mcpAuthorization(context, true);
    const onProviderStart = providerProgress((text) => context.terminal.note(text));
    const bridge = new McpBridge([definition], {
      authorization: authorization.options,
      onProviderStart,
      ...(context.sandbox ? { sandbox: context.sandbox } : {}),
    });
    try {
      const { unavailable, catalogs } = await bridge.openSession("openworker-cli-auth").discover([definition.namespace], { signal: context.signal });
      const failure = unavailable[0];
      if (failure !== undefined) throw new OpenWorkerError(failure.code, failure.message, { details: { namespace: definition.namespace } });
      const stored = await authorization.options.store.load(keyOf(definition, resourceOf));
      const summary = { namespace: definition.namespace, ...describe(stored), tools: catalogs[0]?.tools.length ?? 0 };
      if (context.terminal.json) context.terminal.printJson(summary);
      else if (stored?.tokens === undefined)
        context.terminal.line(`MCP provider "${definition.namespace}" needs no authorization: it answered without a token (${summary.tools} tools)`);
      else
        context.terminal.line(
          `authorized MCP provider "${definition.namespace}"${summary.scopes ? ` for ${summary.scopes}` : ""}${summary.expiresAt ? `, until ${summary.expiresAt}` : ""} (${summary.tools} tools)`,
        );
      return EXIT_CODES.ok;
    } finally {
      await bridge.dispose();
      await bridge.joinCleanup().catch(() => undefined);
      await authorization.close();
    }
  },
};

/** `auth status [namespace]`: what the token store holds, without any token. */
export const authStatus: CommandSpec = {
  words: ["auth", "status"],
  summary: "Show which MCP providers are authorized, for which scopes and until when (never the tokens)",
  usage: "[namespace] [--json]",
  positionals: { min: 0, max: 1 },
  listing: true,
  options: {},
  details: `${AUTH_DETAILS}\nReads the token store only: it starts no provider and asks no server.`,
  run: async (context) => {
    const { FileTokenStore } = await import("@openworker/mcp-bridge");
    const store = new FileTokenStore(tokenStorePath(context));
    const wanted = context.positionals[0];
    const keys = (await store.keys()).filter((key) => wanted === undefined || key.namespace === wanted);
    const rows = await Promise.all(keys.map(async (key) => ({ namespace: key.namespace, resource: key.resource, ...describe(await store.load(key)) })));
    if (context.terminal.json) {
      context.terminal.printJson(rows);
      return EXIT_CODES.ok;
    }
    if (rows.length === 0) {
      context.terminal.line(wanted === undefined ? "no MCP provider is authorized" : `MCP provider "${wanted}" is not authorized`);
      return EXIT_CODES.ok;
    }
    await context.terminal.stream(
      table([
        ["provider", "resource", "scopes", "expires", "refresh"],
        ...rows.map((row) => [row.namespace, row.resource, row.scopes ?? "-", row.expiresAt ?? "-", row.refreshable ? "yes" : "no"]),
      ]),
      { signal: context.signal },
    );
    return EXIT_CODES.ok;
  },
};

/** `auth logout <namespace>`: forgets the provider's tokens and registered clients. */
export const authLogout: CommandSpec = {
  words: ["auth", "logout"],
  summary: "Forget an MCP provider's tokens (the next turn needs `auth login` again)",
  usage: "<namespace> [--json]",
  positionals: { min: 1, max: 1 },
  listing: true,
  options: {},
  details: AUTH_DETAILS,
  run: async (context) => {
    const { FileTokenStore } = await import("@openworker/mcp-bridge");
    const store = new FileTokenStore(tokenStorePath(context));
    const namespace = context.positionals[0]!;
    const keys = (await store.keys()).filter((key) => key.namespace === namespace);
    for (const key of keys) await store.delete(key);
    if (context.terminal.json) context.terminal.printJson({ namespace, forgotten: keys.length });
    else
      context.terminal.line(keys.length === 0 ? `MCP provider "${namespace}" was not authorized` : `forgot the authorization of MCP provider "${namespace}"`);
    return EXIT_CODES.ok;
  },
};

function httpProvider(context: CommandContext, namespace: string): StreamableHttpProviderDefinition {
  const definition = context.registry.providers().find((provider) => provider.namespace === namespace);
  if (definition === undefined) {
    throw new OpenWorkerError(
      CLI_ERROR_CODES.AUTH_PROVIDER_UNKNOWN,
      `auth: no MCP provider "${namespace}" is registered; pass the servers file that defines it with --servers FILE`,
      { details: { namespace } },
    );
  }
  if (definition.transport !== "streamable_http") {
    throw new OpenWorkerError(
      CLI_ERROR_CODES.AUTH_PROVIDER_UNKNOWN,
      `auth: MCP provider "${namespace}" runs over stdio; OAuth applies to streamable-HTTP providers only`,
      { details: { namespace } },
    );
  }
  return definition;
}

/** The token store's key of a provider: the bridge's own binding of tokens to provider and resource. */
function keyOf(definition: StreamableHttpProviderDefinition, resourceOf: (url: URL) => string): McpTokenKey {
  return { namespace: definition.namespace, resource: resourceOf(new URL(definition.url)) };
}

/** What may be shown of a stored authorization: scopes, expiry, whether it can be refreshed; never a token. */
function describe(stored: McpStoredAuthorization | undefined): { scopes?: string; expiresAt?: string; refreshable: boolean; issuer?: string } {
  const tokens = stored?.tokens;
  const expiresIn = tokens?.expires_in;
  return {
    ...(tokens?.scope ? { scopes: tokens.scope } : {}),
    ...(typeof expiresIn === "number" && stored?.obtainedAt !== undefined ? { expiresAt: new Date(stored.obtainedAt + expiresIn * 1000).toISOString() } : {}),
    refreshable: typeof tokens?.refresh_token === "string",
    ...(stored?.issuer ? { issuer: stored.issuer } : {}),
  };
}
