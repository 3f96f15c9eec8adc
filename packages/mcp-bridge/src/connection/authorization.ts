import { createHash, randomUUID } from "node:crypto";
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

/** One authorization request the SDK built: its URL, and the `state` and PKCE verifier it goes with. */
interface AuthorizationFlow {
  readonly url: URL;
  readonly state: string | null;
  readonly verifier: string | undefined;
}

/**
 * The SDK's OAuth client provider for one provider and resource, backed by the host's
 * token store. The PKCE verifier, `state` and discovery state live only as long as one
 * flow, in memory.
 */
export class StoredAuthorization implements OAuthClientProvider {
  /** The flow whose URL the user is (to be) sent to. */
  private flow: AuthorizationFlow | undefined;
  /**
   * While the host's step runs, the flow it showed stays the one its redirect is checked
   * against and its code exchanged with: a call refused meanwhile makes the SDK build
   * another flow, which joins the running one instead of replacing it.
   */
  private held = false;
  /** PKCE verifiers by their S256 challenge: concurrent flows of the SDK each find their own. */
  private readonly verifiers = new Map<string, string>();
  private discovery: OAuthDiscoveryState | undefined;
  private readonly key: McpTokenKey;
  /** How often the server answered 403 `insufficient_scope`, and the scopes it named (M8 step-up). */
  scopeRefusals = 0;
  private readonly named = new Set<string>();

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

  /** The token store entry these tokens are kept under. */
  get tokenKey(): McpTokenKey {
    return this.key;
  }

  /** The authorization URL the SDK asked the user to be sent to, once it did. */
  get pendingAuthorization(): URL | undefined {
    return this.flow?.url;
  }

  /** The `state` the pending authorization URL carried: a redirect without it is refused. */
  get expectedState(): string | undefined {
    return this.flow?.state ?? undefined;
  }

  /** Keeps the pending flow while the host's step runs for it (see `held`). */
  hold(): void {
    this.held = true;
  }

  /** The host's step for the held flow ended: the next flow the SDK builds is a new one. */
  release(): void {
    this.held = false;
    this.flow = undefined;
  }

  /** A 403 `insufficient_scope` answer, with the scopes its challenge named (space-separated). */
  refusedForScope(scope: string | undefined): void {
    this.scopeRefusals++;
    for (const name of (scope ?? "").split(" ")) if (name !== "") this.named.add(name);
  }

  /** The scopes the server named in its refusals that the token in use does not hold. */
  get missingScopes(): readonly string[] {
    const held = new Set(this.scopes ?? []);
    return [...this.named].filter((scope) => !held.has(scope));
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
    return randomUUID();
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
    const challenge = authorizationUrl.searchParams.get("code_challenge") ?? "";
    const verifier = this.verifiers.get(challenge);
    this.verifiers.delete(challenge);
    if (this.held) return;
    this.flow = { url: authorizationUrl, state: authorizationUrl.searchParams.get("state"), verifier };
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifiers.set(createHash("sha256").update(codeVerifier).digest("base64url"), codeVerifier);
  }

  codeVerifier(): string {
    const verifier = this.flow?.verifier;
    if (verifier === undefined) throw new Error("no authorization is in progress for this provider (no PKCE code verifier)");
    return verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if ((scope === "verifier" || scope === "all") && !this.held) this.flow = undefined;
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
