import { availableParallelism } from "node:os";
import type { McpProviderDefinition } from "@openworker/registry";
import { LIMITS } from "@openworker/tools-sdk";
import type { McpAuthorizationOptions } from "./connection/authorization.js";
import type { SandboxLauncher } from "./process/placement.js";
import { isSecretName } from "./redact.js";

/** How the bridge connects, discovers and cleans up. Every field has a default. */
export interface McpBridgeOptions {
  /**
   * Bound on starting a provider and finishing `initialize`, for providers whose
   * definition sets no `connectTimeoutMs` of its own (M10). Default 10 000 ms.
   */
  readonly connectTimeoutMs?: number;
  /** Bound on one provider's whole paginated `tools/list`. Default 10 000 ms. */
  readonly discoveryTimeoutMs?: number;
  /**
   * Stdio providers starting at once across the bridge's sessions; the others wait their
   * turn, and `connectTimeoutMs` counts from it. Default: the machine's CPU count
   * (`os.availableParallelism()`), at least 2.
   */
  readonly maxConcurrentStarts?: number;
  /**
   * How long one start holds its turn at most: a provider that hangs before `initialize`
   * stops holding up the others after this, while its own connect bound runs on.
   * Default 1 000 ms (a Node provider took about half a second of CPU to start here).
   */
  readonly maxStartTurnMs?: number;
  /** Pages of `tools/list` accepted per provider. Default 100. */
  readonly maxCatalogPages?: number;
  /** Tools accepted per provider catalog. Default 10 000. */
  readonly maxCatalogTools?: number;
  /**
   * Bytes of tool definitions (name, description, schemas, annotations, title as UTF-8
   * JSON) accepted per provider catalog. Default 16 MiB.
   */
  readonly maxCatalogBytes?: number;
  /**
   * Grace of each cleanup step (M4): after stdin closes, and again after SIGTERM,
   * before SIGKILL. Default 2 000 ms.
   */
  readonly closeGraceMs?: number;
  /**
   * The environment every stdio child starts from, before its provider's own `env`
   * (E6). Default: an allowlist of the host's variables ({@link SAFE_ENV_NAMES}, `LC_*`).
   */
  readonly baseEnv?: Readonly<Record<string, string>>;
  /** How the bridge introduces itself in `initialize`. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** Largest stdout line (one JSON-RPC message) accepted from a stdio child. Default 32 MiB. */
  readonly maxMessageBytes?: number;
  /**
   * Bytes that may wait to be written to a stdio child's stdin before the bridge watches
   * whether the child still reads. Past it, a child that takes nothing for 1 s (or a
   * backlog 16 times this) is taken for broken: its connection ends, its calls in flight
   * fail `MCP_PROVIDER_CRASHED` and its process tree is ended. Default 4 MiB.
   */
  readonly maxStdinBacklogBytes?: number;
  /**
   * Receives each chunk a stdio child writes to stderr. When omitted, stderr is
   * discarded (it may echo the child's environment, E6), but for its last 2 KB, kept to
   * explain a provider that exits while starting (redacted, in that failure's message).
   */
  readonly onStderr?: (namespace: string, text: string) => void;
  /**
   * Told when a session begins to start (or reach) a provider, and when that ends, so a
   * host can show what it waits for. A listener that throws is ignored.
   */
  readonly onProviderStart?: (event: McpProviderStartEvent) => void;
  /**
   * Starts providers registered with `placement: "sandbox"` (see {@link SandboxLauncher}).
   * Without it such a provider is never started: it is unavailable with
   * `MCP_SANDBOX_UNAVAILABLE` (fail closed).
   */
  readonly sandbox?: SandboxLauncher;
  /**
   * OAuth 2.1 for streamable-HTTP providers that require it (M8): the token store and
   * the host's interactive step. Without it, a provider that answers 401 is unavailable
   * with `MCP_CONNECT_FAILED`.
   */
  readonly authorization?: McpAuthorizationOptions;
  /**
   * Receives the log messages providers send (`notifications/message`), bounded: at most
   * 20 a second per connection (the others are dropped, and counted on the next one let
   * through), each message cut to 2 KiB and stripped of configured secrets (E6). Never
   * model text. With it, the bridge asks for `info` and above (`logging/setLevel` on the
   * 2025 era where the server declares logging, the per-request level on 2026-07-28).
   * A listener that throws is ignored.
   */
  readonly onProviderLog?: (event: McpProviderLog) => void;
  /**
   * Declare the client capability `elicitation` (form and URL modes) at every connect, so
   * providers may ask for user input during a call; each request goes to that call's
   * `onElicitation` (M9, `McpCallOptions.onElicitation`). Default false: no
   * capability is declared and a provider's `elicitation/create` is refused.
   */
  readonly elicitation?: boolean;
  /**
   * How long one elicitation waits for the host's answer before it is answered `cancel`;
   * never past the call's own bound. Default 600 000 ms (10 minutes).
   */
  readonly elicitationTimeoutMs?: number;
}

/** One log message of a provider, as the bridge passes it on. */
export interface McpProviderLog {
  readonly namespace: string;
  /** The bridge session whose connection received it. */
  readonly sessionId: string;
  /** The MCP (syslog) level: debug, info, notice, warning, error, critical, alert, emergency. */
  readonly level: string;
  readonly logger?: string;
  /** The message's data as text (JSON for structured data), at most 2 KiB, redacted. */
  readonly message: string;
  /** Messages of this connection dropped since the previous one passed on (the rate bound). */
  readonly dropped?: number;
}

/**
 * A provider start, as {@link McpBridgeOptions.onProviderStart} hears of it.
 *
 * @example
 * ```ts
 * const onProviderStart = (event: McpProviderStartEvent) => {
 *   if (event.phase === "connecting") console.error(`starting ${event.namespace} (${event.launch})`);
 * };
 * ```
 */
export interface McpProviderStartEvent {
  readonly namespace: string;
  /** `connecting` as the start begins (a wait for a start turn included); `connected` or `failed` once it ends. */
  readonly phase: "connecting" | "connected" | "failed";
  /** The launch as it may be shown: the program's file name and redacted arguments, or the redacted URL (E6). */
  readonly launch: string;
  /** The provider's connect bound. */
  readonly connectTimeoutMs: number;
}

/** {@link McpBridgeOptions} with every default applied. */
export interface ResolvedOptions {
  readonly connectTimeoutMs: number;
  readonly discoveryTimeoutMs: number;
  readonly maxConcurrentStarts: number;
  readonly maxStartTurnMs: number;
  readonly maxCatalogPages: number;
  readonly maxCatalogTools: number;
  readonly maxCatalogBytes: number;
  readonly closeGraceMs: number;
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly clientInfo: { readonly name: string; readonly version: string };
  readonly maxMessageBytes: number;
  readonly maxStdinBacklogBytes: number;
  readonly onStderr: ((namespace: string, text: string) => void) | undefined;
  readonly onProviderStart: ((event: McpProviderStartEvent) => void) | undefined;
  readonly sandbox: SandboxLauncher | undefined;
  readonly authorization: McpAuthorizationOptions | undefined;
  readonly onProviderLog: ((event: McpProviderLog) => void) | undefined;
  readonly elicitation: boolean;
  readonly elicitationTimeoutMs: number;
  /** The call bound of providers that set no `callTimeoutMs` of their own (E1's 75 s). */
  readonly callTimeoutMs: number;
}

/**
 * The host variables a stdio child inherits by default (E6): what programs need to find
 * executables, files and their locale, and nothing that usually carries credentials.
 * `LC_*` variables are included too, except those whose names look secret.
 *
 * @example
 * ```ts
 * SAFE_ENV_NAMES.includes("PATH"); // true
 * ```
 */
export const SAFE_ENV_NAMES: readonly string[] = Object.freeze([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "TMPDIR",
  "TEMP",
  "TMP",
  // Windows: what a process needs to start at all.
  "SystemRoot",
  "SYSTEMROOT",
  "windir",
  "ComSpec",
  "PATHEXT",
  "SystemDrive",
  "USERPROFILE",
  "APPDATA",
  "LOCALAPPDATA",
  "ProgramFiles",
  "ProgramData",
]);

/**
 * Picks the safe base environment out of `source` (default `process.env`): the
 * {@link SAFE_ENV_NAMES} and `LC_*`, skipping exported shell functions and any name that
 * looks secret ({@link isSecretName}: `LC_API_TOKEN` stays out).
 *
 * @example
 * ```ts
 * const env = safeBaseEnv({ PATH: "/usr/bin", AWS_SECRET_ACCESS_KEY: "x" }); // { PATH: "/usr/bin" }
 * ```
 */
export function safeBaseEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || value.startsWith("()")) continue;
    // A name the redactor treats as secret stays out even under `LC_*` (which ssh forwards,
    // and which some use to smuggle variables through it).
    if (isSecretName(name)) continue;
    if (SAFE_ENV_NAMES.includes(name) || name.startsWith("LC_")) env[name] = value;
  }
  return env;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`McpBridgeOptions.${name} must be a finite number ≥ 0, got ${value}`);
  return value;
}

function atLeastOne(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`McpBridgeOptions.${name} must be an integer ≥ 1, got ${value}`);
  return value;
}

function launcher(value: SandboxLauncher | undefined): SandboxLauncher | undefined {
  if (value !== undefined && typeof value !== "function")
    throw new TypeError(`McpBridgeOptions.sandbox must be a function (a sandbox launcher), got ${value === null ? "null" : typeof value}`);
  return value;
}

function listener<T>(value: T | undefined, name: string): T | undefined {
  if (value !== undefined && typeof value !== "function")
    throw new TypeError(`McpBridgeOptions.${name} must be a function, got ${value === null ? "null" : typeof value}`);
  return value;
}

function flag(value: boolean | undefined, name: string): boolean {
  if (value !== undefined && typeof value !== "boolean")
    throw new TypeError(`McpBridgeOptions.${name} must be true or false, got ${value === null ? "null" : typeof value}`);
  return value === true;
}

function authorizationOptions(value: McpAuthorizationOptions | undefined): McpAuthorizationOptions | undefined {
  if (value === undefined) return undefined;
  const store = value.store as Partial<McpAuthorizationOptions["store"]> | undefined;
  if (typeof store?.load !== "function" || typeof store.save !== "function" || typeof store.delete !== "function") {
    throw new TypeError("McpBridgeOptions.authorization.store must be a token store (load, save and delete functions), e.g. new FileTokenStore(path)");
  }
  listener(value.authorize, "authorization.authorize");
  listener(value.redirectUrl, "authorization.redirectUrl");
  listener(value.howToAuthorize, "authorization.howToAuthorize");
  if (value.authorize !== undefined && value.redirectUrl === undefined)
    throw new TypeError("McpBridgeOptions.authorization.authorize needs redirectUrl: the URL the authorization server sends the user back to");
  return { ...value, authorizeTimeoutMs: positive(value.authorizeTimeoutMs, 300_000, "authorization.authorizeTimeoutMs") };
}

/** Applies the defaults of {@link McpBridgeOptions}. */
export function resolveOptions(options: McpBridgeOptions = {}): ResolvedOptions {
  return {
    connectTimeoutMs: positive(options.connectTimeoutMs, 10_000, "connectTimeoutMs"),
    discoveryTimeoutMs: positive(options.discoveryTimeoutMs, 10_000, "discoveryTimeoutMs"),
    maxConcurrentStarts: atLeastOne(options.maxConcurrentStarts, Math.max(2, availableParallelism()), "maxConcurrentStarts"),
    maxStartTurnMs: positive(options.maxStartTurnMs, 1_000, "maxStartTurnMs"),
    maxCatalogPages: positive(options.maxCatalogPages, 100, "maxCatalogPages"),
    maxCatalogTools: positive(options.maxCatalogTools, 10_000, "maxCatalogTools"),
    maxCatalogBytes: positive(options.maxCatalogBytes, 16 * 1024 * 1024, "maxCatalogBytes"),
    closeGraceMs: positive(options.closeGraceMs, 2_000, "closeGraceMs"),
    baseEnv: options.baseEnv ?? safeBaseEnv(),
    clientInfo: options.clientInfo ?? { name: "openworker-mcp-bridge", version: "0.0.0" },
    maxMessageBytes: positive(options.maxMessageBytes, 32 * 1024 * 1024, "maxMessageBytes"),
    maxStdinBacklogBytes: positive(options.maxStdinBacklogBytes, 4 * 1024 * 1024, "maxStdinBacklogBytes"),
    onStderr: options.onStderr,
    onProviderStart: listener(options.onProviderStart, "onProviderStart"),
    sandbox: launcher(options.sandbox),
    authorization: authorizationOptions(options.authorization),
    onProviderLog: listener(options.onProviderLog, "onProviderLog"),
    elicitation: flag(options.elicitation, "elicitation"),
    elicitationTimeoutMs: positive(options.elicitationTimeoutMs, 600_000, "elicitationTimeoutMs"),
    callTimeoutMs: LIMITS.callTimeoutMs,
  };
}

/** A provider's connect and call bounds (M10): its definition's own, else the bridge's. */
export function providerBounds(
  definition: McpProviderDefinition,
  options: ResolvedOptions,
): { readonly connectTimeoutMs: number; readonly callTimeoutMs: number } {
  return {
    connectTimeoutMs: definition.connectTimeoutMs ?? options.connectTimeoutMs,
    callTimeoutMs: definition.callTimeoutMs ?? options.callTimeoutMs,
  };
}
