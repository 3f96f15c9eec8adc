import { LIMITS, OpenWorkerError, validateNamespace } from "@openworker/tools-sdk";
import { REGISTRY_ERROR_CODES as CODES } from "./codes.js";
import {
  type McpOAuthSettings,
  MAX_PROVIDER_BOUND_MS,
  type McpProviderDefinition,
  type ProviderBounds,
  type ProviderPlacement,
  type ProviderSandboxPolicy,
  type StdioProviderDefinition,
  type StreamableHttpProviderDefinition,
} from "./provider.js";
import { checkSandboxPolicy } from "./sandbox-policy.js";

/**
 * What `registerMcp` takes: a stdio provider without the `transport` tag (`args` defaults to `[]`).
 *
 * @example
 * ```ts
 * const input: StdioProviderInput = { namespace: "acer", program: "bin/acer-mcp-launcher", connectTimeoutMs: 30_000 };
 * ```
 */
export interface StdioProviderInput extends ProviderBounds {
  readonly namespace: string;
  readonly program: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly placement?: ProviderPlacement;
  /** Only with `placement: "sandbox"`: what the sandbox lets it reach. */
  readonly sandbox?: ProviderSandboxPolicy;
}

/**
 * What `registerMcpHttp` takes: a streamable-HTTP provider without the `transport` tag.
 *
 * @example
 * ```ts
 * const input: StreamableHttpProviderInput = { namespace: "local", url: "http://localhost:8123/mcp" };
 * ```
 */
export interface StreamableHttpProviderInput extends ProviderBounds {
  readonly namespace: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly allowRemote?: boolean;
  readonly placement?: ProviderPlacement;
  readonly oauth?: McpOAuthSettings;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** How messages name a definition that came from a file: its entry and the file's own field names. */
export interface DefinitionSource {
  /** Replaces `MCP provider "ns"` at the start of every message, e.g. `servers.json: server "ns"`. */
  readonly label: string;
  /** The file's name for a definition field, e.g. `{ program: "command" }`. */
  readonly fieldNames?: Readonly<Record<string, string>>;
}

/**
 * Checks a provider definition field by field (it may come from untyped JavaScript or a
 * file) and returns a frozen, normalized copy: `args` defaults to `[]`, absent optional
 * fields are left out. Throws an {@link OpenWorkerError} naming the provider and field.
 */
export function normalizeProviderDefinition(definition: unknown, source?: DefinitionSource): McpProviderDefinition {
  const fields = definitionFields(definition);
  try {
    return normalizeFields(fields);
  } catch (error) {
    if (!source || !OpenWorkerError.isInstance(error)) throw error;
    throw relabel(error, source, fields.namespace);
  }
}

/**
 * What `registerMcp`/`registerMcpHttp` hand on: the caller's fields with the transport
 * tag (and `args` defaulting to `[]` for stdio). Untyped JavaScript may pass anything.
 */
export function withTransport(definition: unknown, transport: McpProviderDefinition["transport"]): Record<string, unknown> {
  const fields = definitionFields(definition);
  return transport === "stdio" ? { ...fields, transport, args: fields.args ?? [] } : { ...fields, transport };
}

/** A plain copy of a definition's own fields; a non-object, or one whose fields cannot be read (a throwing getter or Proxy trap), is PROVIDER_INVALID. */
function definitionFields(definition: unknown): Record<string, unknown> {
  if (typeof definition !== "object" || definition === null || Array.isArray(definition)) {
    throw new OpenWorkerError(CODES.providerInvalid, `MCP provider definition must be an object, got ${typeOf(definition)}`);
  }
  try {
    return { ...definition } as Record<string, unknown>;
  } catch (cause) {
    throw new OpenWorkerError(
      CODES.providerInvalid,
      `MCP provider definition could not be read (${cause instanceof Error ? cause.message : String(cause)}); pass a plain object`,
      { cause },
    );
  }
}

function relabel(error: OpenWorkerError, source: DefinitionSource, namespace: unknown): OpenWorkerError {
  const own = `MCP provider ${JSON.stringify(namespace)}: `;
  let message = error.message.startsWith(own) ? error.message.slice(own.length) : error.message;
  const field = error.details.field;
  if (typeof field === "string") {
    const [head = field, ...rest] = field.split(".");
    const renamed = [source.fieldNames?.[head] ?? head, ...rest].join(".");
    message = message.replace(`field "${field}"`, `field "${renamed}"`);
  }
  return new OpenWorkerError(error.code, `${source.label}: ${message}`, { cause: error, details: error.details });
}

const KNOWN_FIELDS = {
  stdio: ["transport", "namespace", "program", "args", "env", "cwd", "placement", "sandbox", "connectTimeoutMs", "callTimeoutMs"],
  streamable_http: ["transport", "namespace", "url", "headers", "allowRemote", "placement", "connectTimeoutMs", "callTimeoutMs", "oauth"],
} as const;

/** What to write instead of a field another way of registering spells differently (`registerMcp` takes `program`, servers.json `command`). */
const FIELD_HINTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  stdio: { command: 'use "program" (servers.json\'s "command" is "program" here)' },
};

function normalizeFields(fields: Record<string, unknown>): McpProviderDefinition {
  const namespace = checkProviderNamespace(fields.namespace);
  const label = `MCP provider ${JSON.stringify(namespace)}`;
  const placement = checkPlacement(fields.placement, label);
  const bounds = checkBounds(fields, label);
  if (fields.transport === "stdio" || fields.transport === "streamable_http") {
    // A misspelt field ("argz") would otherwise be dropped without a word, as the servers file refuses it.
    const known: readonly string[] = KNOWN_FIELDS[fields.transport];
    const unknown = Object.keys(fields).find((key) => !known.includes(key) && fields[key] !== undefined);
    if (unknown !== undefined) {
      const hint = FIELD_HINTS[fields.transport]?.[unknown];
      throw new OpenWorkerError(
        CODES.providerInvalid,
        `${label}: field ${JSON.stringify(unknown)} is not known (known: ${known.join(", ")})${hint ? `; ${hint}` : ""}`,
        {
          details: { field: unknown, namespace },
        },
      );
    }
  }
  if (fields.transport === "stdio") return Object.freeze({ ...normalizeStdio(fields, namespace, label, placement), ...bounds });
  if (fields.transport === "streamable_http") return Object.freeze({ ...normalizeHttp(fields, namespace, label, placement), ...bounds });
  throw new OpenWorkerError(
    CODES.transportUnknown,
    `${label}: field "transport" ${JSON.stringify(fields.transport)} is not supported; use "stdio" or "streamable_http"`,
    { details: { field: "transport", namespace, transport: fields.transport } },
  );
}

/** N1/N3/N4 for a provider namespace; throws the SDK's codes or `NAMESPACE_TOO_LONG`. */
export function checkProviderNamespace(namespace: unknown): string {
  validateNamespace(namespace as string);
  const name = namespace as string;
  // "ns.x" is the shortest name under a namespace, and its alias "ns__x" must still fit N4.
  if (name.length + 3 > LIMITS.nameBytes) {
    throw new OpenWorkerError(
      CODES.namespaceTooLong,
      `namespace ${JSON.stringify(name)} is ${name.length} bytes; model aliases must fit ${LIMITS.nameBytes} bytes, ` +
        `so a namespace may have at most ${LIMITS.nameBytes - 3}`,
      { details: { namespace: name, bytes: name.length } },
    );
  }
  return name;
}

function checkPlacement(placement: unknown, label: string): ProviderPlacement | undefined {
  if (placement === undefined || placement === "host" || placement === "sandbox") return placement;
  throw new OpenWorkerError(CODES.placementInvalid, `${label}: field "placement" ${JSON.stringify(placement)} is not "host" or "sandbox"`, {
    details: { field: "placement", placement },
  });
}

/** M10: the provider's own connect and call bounds, each present only when given. */
function checkBounds(fields: Record<string, unknown>, label: string): ProviderBounds {
  const bounds: { connectTimeoutMs?: number; callTimeoutMs?: number } = {};
  for (const field of ["connectTimeoutMs", "callTimeoutMs"] as const) {
    const value = fields[field];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_PROVIDER_BOUND_MS) {
      const shown = typeof value === "number" ? String(value) : typeOf(value);
      throw new OpenWorkerError(
        CODES.providerInvalid,
        `${label}: field "${field}" must be a whole number of milliseconds from 1 to ${MAX_PROVIDER_BOUND_MS} (one hour), got ${shown}`,
        { details: { field } },
      );
    }
    bounds[field] = value;
  }
  return bounds;
}

function normalizeStdio(fields: Record<string, unknown>, namespace: string, label: string, placement: ProviderPlacement | undefined): StdioProviderDefinition {
  const program = fields.program;
  if (typeof program !== "string" || program.length === 0 || program.includes("\0")) {
    throw fieldError(label, "program", "must be a non-empty string naming the program to start", program);
  }
  const args = fields.args ?? [];
  if (!Array.isArray(args)) throw fieldError(label, "args", "must be an array of strings", args);
  args.forEach((arg: unknown, index) => {
    if (typeof arg !== "string") throw fieldError(label, `args[${index}]`, "must be a string (each argument is one string)", arg);
    if (arg.includes("\0")) throw fieldError(label, `args[${index}]`, "contains a NUL character, which no program argument can carry; remove it", arg);
  });
  const env = fields.env === undefined ? undefined : checkStringMap(fields.env, label, "env", isEnvName);
  const cwd = fields.cwd;
  if (cwd !== undefined && (typeof cwd !== "string" || cwd.length === 0 || cwd.includes("\0"))) {
    throw fieldError(label, "cwd", "must be a non-empty string when present", cwd);
  }
  if (fields.sandbox !== undefined && placement !== "sandbox") {
    throw fieldError(
      label,
      "sandbox",
      'is a sandbox policy and applies only with placement "sandbox"; set "placement": "sandbox" or remove it',
      fields.sandbox,
    );
  }
  const sandbox = fields.sandbox === undefined ? undefined : checkSandboxPolicy(fields.sandbox, label);
  return Object.freeze({
    transport: "stdio" as const,
    namespace,
    program,
    args: Object.freeze([...(args as string[])]),
    ...(env === undefined ? {} : { env }),
    ...(cwd === undefined ? {} : { cwd: cwd as string }),
    ...(placement === undefined ? {} : { placement }),
    ...(sandbox === undefined ? {} : { sandbox }),
  });
}

function normalizeHttp(
  fields: Record<string, unknown>,
  namespace: string,
  label: string,
  placement: ProviderPlacement | undefined,
): StreamableHttpProviderDefinition {
  if (placement === "sandbox") {
    // The bridge starts no process for a service it only connects to: it cannot place one
    // in a sandbox, and accepting the field would promise isolation nobody provides.
    throw new OpenWorkerError(
      CODES.placementInvalid,
      `${label}: field "placement" "sandbox" applies to stdio providers, which the host starts; a streamable_http provider is a service running on its own: isolate that service yourself and leave placement out (or "host")`,
      { details: { field: "placement", placement, namespace } },
    );
  }
  const allowRemote = fields.allowRemote;
  if (allowRemote !== undefined && typeof allowRemote !== "boolean") {
    throw fieldError(label, "allowRemote", "must be true or false when present", allowRemote);
  }
  const url = checkUrl(fields.url, label, allowRemote === true);
  const headers = fields.headers === undefined ? undefined : checkStringMap(fields.headers, label, "headers", isHeaderName);
  const oauth = fields.oauth === undefined ? undefined : checkOAuth(fields.oauth, label);
  return Object.freeze({
    transport: "streamable_http" as const,
    namespace,
    url,
    ...(headers === undefined ? {} : { headers }),
    ...(allowRemote === undefined ? {} : { allowRemote }),
    ...(placement === undefined ? {} : { placement }),
    ...(oauth === undefined ? {} : { oauth }),
  });
}

const OAUTH_FIELDS = ["grant", "clientId", "clientSecretEnv", "scopes", "clientMetadataUrl"];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** M8: a provider's OAuth settings; `true` stands for the defaults. */
function checkOAuth(raw: unknown, label: string): McpOAuthSettings {
  if (raw === true) return Object.freeze({});
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw fieldError(label, "oauth", "must be an object of OAuth settings (or true for the defaults)", raw);
  const fields = raw as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !OAUTH_FIELDS.includes(key) && fields[key] !== undefined);
  if (unknown !== undefined) throw fieldError(label, `oauth.${unknown}`, `is not known (known: ${OAUTH_FIELDS.join(", ")})`, fields[unknown]);
  const { grant, clientId, clientSecretEnv, scopes, clientMetadataUrl } = fields;
  if (grant !== undefined && grant !== "authorization_code" && grant !== "client_credentials") {
    throw fieldError(label, "oauth.grant", 'must be "authorization_code" or "client_credentials"', grant);
  }
  if (clientId !== undefined && (typeof clientId !== "string" || clientId.length === 0))
    throw fieldError(label, "oauth.clientId", "must be a non-empty string", clientId);
  if (clientSecretEnv !== undefined && (typeof clientSecretEnv !== "string" || !ENV_NAME.test(clientSecretEnv))) {
    throw fieldError(
      label,
      "oauth.clientSecretEnv",
      "must name an environment variable (letters, digits and _); the secret itself never goes in the definition",
      clientSecretEnv,
    );
  }
  if (scopes !== undefined && (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== "string" || scope.length === 0 || /\s/.test(scope)))) {
    throw fieldError(label, "oauth.scopes", "must be an array of scope names (non-empty strings without spaces)", scopes);
  }
  if (clientMetadataUrl !== undefined && (typeof clientMetadataUrl !== "string" || !clientMetadataUrl.startsWith("https://"))) {
    throw fieldError(label, "oauth.clientMetadataUrl", "must be an https URL of the client's metadata document", clientMetadataUrl);
  }
  if (grant === "client_credentials" && (clientId === undefined || clientSecretEnv === undefined)) {
    throw fieldError(label, "oauth", 'with grant "client_credentials" needs clientId and clientSecretEnv (a machine client is registered beforehand)', raw);
  }
  return Object.freeze({
    ...(grant === undefined ? {} : { grant }),
    ...(clientId === undefined ? {} : { clientId }),
    ...(clientSecretEnv === undefined ? {} : { clientSecretEnv }),
    ...(scopes === undefined ? {} : { scopes: Object.freeze([...(scopes as string[])]) }),
    ...(clientMetadataUrl === undefined ? {} : { clientMetadataUrl }),
  }) as McpOAuthSettings;
}

function checkUrl(raw: unknown, label: string, allowRemote: boolean): string {
  if (typeof raw !== "string" || raw.length === 0) throw fieldError(label, "url", "must be a non-empty string", raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    const shown = urlForDisplay(raw);
    throw new OpenWorkerError(CODES.providerInvalid, `${label}: field "url" ${JSON.stringify(shown)} is not a valid URL (e.g. "http://127.0.0.1:8080/mcp")`, {
      cause,
      details: { field: "url", url: shown },
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw fieldError(label, "url", `must use http or https, got ${JSON.stringify(url.protocol)}`, raw);
  }
  // Credentials in a URL end up in logs and journals (E6); headers are kept out of them.
  if (url.username !== "" || url.password !== "") {
    throw fieldError(label, "url", 'must not carry credentials; pass them in "headers" instead', "(redacted)");
  }
  const local = url.hostname === "localhost" || url.hostname === "[::1]" || LOOPBACK_V4.test(url.hostname);
  if (!local && !allowRemote) {
    throw new OpenWorkerError(
      CODES.urlNotLocal,
      `${label}: url host ${JSON.stringify(url.hostname)} is not local; streamable_http is for local services ` +
        `(localhost, 127.0.0.1, [::1]); set "allowRemote": true to connect elsewhere on purpose`,
      { details: { field: "url", host: url.hostname } },
    );
  }
  return raw;
}

function checkStringMap(value: unknown, label: string, field: string, validKey: (key: string) => boolean): Readonly<Record<string, string>> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw fieldError(label, field, "must be an object of string values", value);
  }
  // No prototype: a key such as "__proto__" is stored as itself (an ordinary object's
  // setter would drop it), and no lookup in the map ever finds Object.prototype members.
  const copy = Object.create(null) as Record<string, string>;
  for (const [key, item] of Object.entries(value)) {
    if (!validKey(key)) throw fieldError(label, `${field}.${key}`, "is not a valid name", key);
    // Values may be credentials (E6): never echo them (a value that is not a string is named by its type only).
    if (typeof item !== "string" || item.includes("\0") || (field === "headers" && /[\r\n]/.test(item))) {
      throw fieldError(
        label,
        `${field}.${key}`,
        field === "headers" ? "must be a string without NUL or line breaks" : "must be a string without NUL",
        typeof item === "string" ? "(hidden)" : item,
      );
    }
    copy[key] = item;
  }
  return Object.freeze(copy);
}

function isEnvName(key: string): boolean {
  return key.length > 0 && !key.includes("=") && !key.includes("\0");
}

function isHeaderName(key: string): boolean {
  return HEADER_NAME.test(key);
}

function fieldError(label: string, field: string, problem: string, value: unknown): OpenWorkerError {
  const shown = typeof value === "string" ? "" : `, got ${typeOf(value)}`;
  return new OpenWorkerError(CODES.providerInvalid, `${label}: field "${field}" ${problem}${shown}`, {
    details: { field },
  });
}

/** A short description of a value's JSON type, for messages. */
export function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** One line that tells two providers apart in a conflict message. */
export function describeProvider(provider: McpProviderDefinition): string {
  return provider.transport === "stdio"
    ? `stdio provider ${JSON.stringify(provider.namespace)} (program ${JSON.stringify(provider.program)})`
    : `streamable_http provider ${JSON.stringify(provider.namespace)} (url ${JSON.stringify(urlForDisplay(provider.url))})`;
}

/**
 * A provider URL as messages and listings show it: origin and path, without
 * credentials, query or fragment, which may carry secrets (E6). A URL that does not
 * parse keeps its shape with those parts replaced by `(redacted)`.
 *
 * @example
 * ```ts
 * urlForDisplay("http://127.0.0.1:8080/mcp?token=abc"); // "http://127.0.0.1:8080/mcp"
 * urlForDisplay("http://admin:pw@127.0.0.1:99999/mcp"); // "http://(redacted)@127.0.0.1:99999/mcp"
 * ```
 */
export function urlForDisplay(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    const shown = url.replace(/^([^/?#]*\/\/)[^/?#]*@/, "$1(redacted)@").replace(/[?#].*$/s, "?(redacted)");
    return shown.length > 200 ? `${shown.slice(0, 200)}…` : shown;
  }
}
