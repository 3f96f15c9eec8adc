/**
 * Where an MCP provider's process runs (A4). Only MCP providers can be placed; native
 * tools are trusted host code and always run in the host process.
 *
 * @example
 * ```ts
 * registry.registerMcp({ namespace: "untrusted", program: "/opt/untrusted/mcp", placement: "sandbox" });
 * ```
 */
export type ProviderPlacement = "host" | "sandbox";

/** The longest connect or call bound a provider may have: one hour (M10). */
export const MAX_PROVIDER_BOUND_MS = 3_600_000;

/**
 * A provider's own time bounds (M10), each a whole number of milliseconds from 1 to
 * {@link MAX_PROVIDER_BOUND_MS}. Absent, the bridge's defaults apply.
 *
 * @example
 * ```ts
 * const bounds: ProviderBounds = { connectTimeoutMs: 60_000, callTimeoutMs: 600_000 };
 * ```
 */
export interface ProviderBounds {
  /** Bound on starting (or reaching) the provider and finishing `initialize`. Default 10 000 ms. */
  readonly connectTimeoutMs?: number;
  /** Bound on each of its tool calls. Default 75 000 ms (E1's bound). */
  readonly callTimeoutMs?: number;
}

/**
 * An MCP provider launched by the runtime as a child process speaking MCP over stdio (M1).
 *
 * @example
 * ```ts
 * const acer: StdioProviderDefinition = { transport: "stdio", namespace: "acer", program: "/opt/acer/mcp", args: [] };
 * ```
 */
export interface StdioProviderDefinition extends ProviderBounds {
  readonly transport: "stdio";
  /** The namespace its tools are selected under: `namespace.remote_tool_name`. */
  readonly namespace: string;
  /** Program to start (absolute, or resolved against the servers file's folder). */
  readonly program: string;
  readonly args: readonly string[];
  /** Extra environment for the child, on top of the runtime's safe base environment (E6). */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory of the child. */
  readonly cwd?: string;
  /** Defaults to `"host"`. */
  readonly placement?: ProviderPlacement;
  /** What the sandbox lets it reach (only with `placement: "sandbox"`); part of its launch definition and so of the execution identity (A2). */
  readonly sandbox?: ProviderSandboxPolicy;
}

/**
 * What a provider placed in a sandbox may reach (A4). Paths are absolute (servers.json
 * resolves relative ones against its folder). Absent fields are the strict defaults: no
 * folder beyond what its program needs to run, writes only to a scratch folder of its own
 * that ends with it, and no network.
 *
 * @example
 * ```ts
 * const policy: ProviderSandboxPolicy = { read: ["/srv/reports"], write: ["/srv/reports/out"], network: "none" };
 * ```
 */
export interface ProviderSandboxPolicy {
  /** Folders or files it may read. */
  readonly read?: readonly string[];
  /** Folders or files it may read and write (besides its scratch folder). */
  readonly write?: readonly string[];
  /** `"none"` (default), or the hosts it may reach; whether a launcher can enforce a host list is the launcher's to say. */
  readonly network?: "none" | { readonly allow: readonly string[] };
}

/**
 * How the runtime obtains OAuth tokens for a streamable-HTTP provider that requires them
 * (M8). Every field is optional: without any, a provider that answers 401 is authorized
 * with the authorization-code flow, its client registered dynamically (or by a client ID
 * metadata document), asking for the scopes the server advertises.
 *
 * @example
 * ```ts
 * const machine: McpOAuthSettings = { grant: "client_credentials", clientId: "reports-host", clientSecretEnv: "REPORTS_CLIENT_SECRET", scopes: ["reports.read"] };
 * ```
 */
export interface McpOAuthSettings {
  /** `authorization_code` (a person signs in; default) or `client_credentials` (a machine host, no person). */
  readonly grant?: "authorization_code" | "client_credentials";
  /** A client registered with the authorization server beforehand; without it the client is registered dynamically. */
  readonly clientId?: string;
  /** The environment variable holding the client's secret (never the secret itself, E6). */
  readonly clientSecretEnv?: string;
  /** The scopes to ask for; default: what the server's metadata names. */
  readonly scopes?: readonly string[];
  /** An HTTPS URL of this client's metadata document, used as its client ID where the authorization server supports it. */
  readonly clientMetadataUrl?: string;
}

/**
 * An MCP provider reached over streamable HTTP at a local service's URL (M1).
 *
 * @example
 * ```ts
 * const local: StreamableHttpProviderDefinition = { transport: "streamable_http", namespace: "local", url: "http://127.0.0.1:8123/mcp" };
 * ```
 */
export interface StreamableHttpProviderDefinition extends ProviderBounds {
  readonly transport: "streamable_http";
  readonly namespace: string;
  readonly url: string;
  /** Extra request headers (credentials here are never written by the runtime, E6). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Streamable HTTP is meant for local services (seed 000): without this flag the URL
   * must point at `localhost`, `127.0.0.0/8` or `[::1]`.
   */
  readonly allowRemote?: boolean;
  readonly placement?: ProviderPlacement;
  /** OAuth settings (M8), for a provider that requires authorization. */
  readonly oauth?: McpOAuthSettings;
}

/**
 * A registered MCP provider, of either transport.
 *
 * @example
 * ```ts
 * const launch = (provider: McpProviderDefinition) => (provider.transport === "stdio" ? provider.program : provider.url);
 * ```
 */
export type McpProviderDefinition = StdioProviderDefinition | StreamableHttpProviderDefinition;
