import { randomUUID } from "node:crypto";
import type {
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { McpOAuthSettings } from "@openworker/registry";

/**
 * Which authorization a token store entry holds: one provider (its namespace) at one
 * resource (its URL, as the MCP authorization spec binds tokens, RFC 8707).
 */
export interface McpTokenKey {
  readonly namespace: string;
  readonly resource: string;
}

/**
 * What the bridge keeps for one provider and resource (M8): its tokens, when they were
 * obtained, and the OAuth clients registered with each authorization server (by issuer).
 * Never journaled, never in a result, error, progress or log (E6).
 */
export interface McpStoredAuthorization {
  readonly tokens?: StoredOAuthTokens;
  /** Milliseconds since the epoch when `tokens` were obtained: with `expires_in`, when they expire. */
  readonly obtainedAt?: number;
  /** The authorization server that issued `tokens`. */
  readonly issuer?: string;
  /** OAuth clients registered dynamically, by the issuer of the authorization server that registered them. */
  readonly clients?: Readonly<Record<string, StoredOAuthClientInformation>>;
}

/**
 * Where OAuth tokens live (M8): a replaceable store bound to provider and resource. The
 * bridge ships {@link FileTokenStore} (a 0600 file); a host may keep them in an OS
 * keychain instead. Every method may be called concurrently for different keys.
 */
export interface McpTokenStore {
  load(key: McpTokenKey): Promise<McpStoredAuthorization | undefined>;
  save(key: McpTokenKey, value: McpStoredAuthorization): Promise<void>;
  delete(key: McpTokenKey): Promise<void>;
}

/** What the host is asked to do for a provider that needs a user's authorization. */
export interface McpAuthorizationRequest {
  readonly namespace: string;
  /** Where to send the user: the authorization server's page, with PKCE, state and the resource. */
  readonly authorizationUrl: URL;
  /** Aborted when the authorization is no longer wanted (cancellation, the host's bound). */
  readonly signal: AbortSignal;
}

/**
 * OAuth 2.1 for streamable-HTTP providers (M8), as the MCP authorization spec defines it
 * and the SDK's client implements it: protected-resource and authorization-server
 * discovery, PKCE, dynamic client registration or a pre-registered client, resource
 * indicators, refresh and step-up. The interactive step is the host's.
 */
export interface McpAuthorizationOptions {
  readonly store: McpTokenStore;
  /**
   * Where the authorization server sends the user back (a loopback URL the host
   * listens on). Asked for once per flow, before the authorization URL is built.
   */
  readonly redirectUrl?: () => Promise<string>;
  /**
   * The host's interactive step: show the user `authorizationUrl` and resolve with the
   * URL the authorization server redirected back to (its query carries `code`, `state`,
   * `iss`). Absent, a provider that needs a user's authorization is unavailable with
   * `MCP_AUTHORIZATION_REQUIRED`, and the host authorizes it outside a turn.
   */
  readonly authorize?: (request: McpAuthorizationRequest) => Promise<string | URL>;
  /**
   * What the host's user does to authorize a provider outside a turn, as the
   * `MCP_AUTHORIZATION_REQUIRED` message says it (the CLI: "run `host auth login notes`").
   * Default: "authorize it with the host first, outside a turn".
   */
  readonly howToAuthorize?: (namespace: string) => string;
  /** Bound on `authorize`. Default 5 minutes. */
  readonly authorizeTimeoutMs?: number;
  /** The client name registered with authorization servers. Default "OpenWorker". */
  readonly clientName?: string;
}

/**
 * The SDK's OAuth client provider for one provider and resource, backed by the host's
 * token store. The PKCE verifier, `state` and discovery state live only as long as one
 * flow, in memory.
 */
export class StoredAuthorization implements OAuthClientProvider {
  /** The authorization URL the SDK asked the user to be sent to, once it did. */
  pendingAuthorization: URL | undefined;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private lastState: string | undefined;
  private readonly key: McpTokenKey;

  constructor(
    namespace: string,
    resource: string,
    private readonly store: McpTokenStore,
    private readonly settings: McpOAuthSettings | undefined,
    private readonly redirect: string | undefined,
    private readonly clientName: string,
    private readonly clientSecret: string | undefined,
  ) {
    this.key = { namespace, resource };
  }

  get redirectUrl(): string | undefined {
    return this.settings?.grant === "client_credentials" ? undefined : this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    const machine = this.settings?.grant === "client_credentials";
    return {
      client_name: this.clientName,
      redirect_uris: machine || this.redirect === undefined ? [] : [this.redirect],
      grant_types: machine ? ["client_credentials"] : ["authorization_code", "refresh_token"],
      response_types: machine ? [] : ["code"],
      token_endpoint_auth_method: this.clientSecret === undefined ? "none" : "client_secret_post",
      ...(this.settings?.scopes === undefined ? {} : { scope: this.settings.scopes.join(" ") }),
    };
  }

  get clientMetadataUrl(): string | undefined {
    return this.settings?.clientMetadataUrl;
  }

  state(): string {
    this.lastState = randomUUID();
    return this.lastState;
  }

  /** The `state` the last authorization URL carried: a redirect without it is refused. */
  get expectedState(): string | undefined {
    return this.lastState;
  }

  async clientInformation(context?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    if (this.settings?.clientId !== undefined) {
      return { client_id: this.settings.clientId, ...(this.clientSecret === undefined ? {} : { client_secret: this.clientSecret }) };
    }
    const registered = context === undefined ? undefined : (await this.store.load(this.key))?.clients?.[context.issuer];
    // A client registered for another redirect (the loopback port changes) is registered again.
    if (registered !== undefined && (this.redirect === undefined || (registered as { redirect_uris?: string[] }).redirect_uris?.includes(this.redirect)))
      return registered;
    // Registering a client needs the host's redirect: without a host step, the flow stops here.
    if (this.redirect === undefined && this.settings?.grant !== "client_credentials") throw new AuthorizationNeeded();
    return undefined;
  }

  async saveClientInformation(information: StoredOAuthClientInformation, context?: OAuthClientInformationContext): Promise<void> {
    if (context === undefined) return;
    const stored = (await this.store.load(this.key)) ?? {};
    await this.store.save(this.key, { ...stored, clients: { ...stored.clients, [context.issuer]: information } });
  }

  async tokens(): Promise<StoredOAuthTokens | undefined> {
    const tokens = (await this.store.load(this.key))?.tokens;
    this.noteScopes(tokens);
    return tokens;
  }

  /**
   * The scopes of the token the connection last sent (what the journal records of a call,
   * M8: never the token itself); `[]` for a token that names none; undefined before a token.
   */
  get scopesInUse(): readonly string[] | undefined {
    return this.scopes;
  }

  private scopes: readonly string[] | undefined;

  private noteScopes(tokens: StoredOAuthTokens | undefined): void {
    if (tokens !== undefined) this.scopes = Object.freeze((tokens.scope ?? "").split(" ").filter((scope) => scope !== ""));
  }

  async saveTokens(tokens: StoredOAuthTokens, context?: OAuthClientInformationContext): Promise<void> {
    this.noteScopes(tokens);
    const stored = (await this.store.load(this.key)) ?? {};
    await this.store.save(this.key, { ...stored, tokens, obtainedAt: Date.now(), ...(context === undefined ? {} : { issuer: context.issuer }) });
  }

  /** A machine host (`client_credentials`) asks for its token itself, with no user. */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.settings?.grant !== "client_credentials") return undefined;
    const wanted = scope ?? this.settings.scopes?.join(" ");
    return new URLSearchParams({ grant_type: "client_credentials", ...(wanted ? { scope: wanted } : {}) });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.pendingAuthorization = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no authorization is in progress for this provider (no PKCE code verifier)");
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "verifier" || scope === "all") this.verifier = undefined;
    if (scope === "discovery" || scope === "all") this.discovery = undefined;
    if (scope === "verifier" || scope === "discovery") return;
    const stored = await this.store.load(this.key);
    if (stored === undefined) return;
    if (scope === "all") return this.store.delete(this.key);
    if (scope === "tokens") {
      const { tokens: _tokens, obtainedAt: _obtainedAt, ...rest } = stored;
      return this.store.save(this.key, rest);
    }
    const { clients: _clients, ...rest } = stored;
    return this.store.save(this.key, rest);
  }
}

/** Thrown into the SDK's flow when it would register a client that no host step can use. */
export class AuthorizationNeeded extends Error {
  constructor() {
    super("the provider requires authorization and the host has no step to obtain it");
  }
}

/** The resource a provider's tokens are bound to: its URL without fragment (RFC 8707). */
export function resourceOf(url: URL): string {
  const resource = new URL(url);
  resource.hash = "";
  return resource.href;
}
