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

/**
 * An MCP provider launched by the runtime as a child process speaking MCP over stdio (M1).
 *
 * @example
 * ```ts
 * const acer: StdioProviderDefinition = { transport: "stdio", namespace: "acer", program: "/opt/acer/mcp", args: [] };
 * ```
 */
export interface StdioProviderDefinition {
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
}

/**
 * An MCP provider reached over streamable HTTP at a local service's URL (M1).
 *
 * @example
 * ```ts
 * const local: StreamableHttpProviderDefinition = { transport: "streamable_http", namespace: "local", url: "http://127.0.0.1:8123/mcp" };
 * ```
 */
export interface StreamableHttpProviderDefinition {
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
