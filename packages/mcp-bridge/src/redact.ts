import type { McpProviderDefinition } from "@openworker/registry";

/**
 * The shortest configured secret that is redacted (E6). A value the host configured as a
 * provider's `env` or `headers` (or handed as a secret) is known to be one, so even a short
 * one is masked; below this it would mask parts of ordinary words.
 */
export const MIN_SECRET_LENGTH = 4;
const MASK = "[redacted]";

/**
 * Environment variable names whose values are secrets (E6): such a variable never reaches
 * a child's base environment, and a host's value of one is redacted.
 *
 * @example
 * ```ts
 * isSecretName("LC_HOSTILE_TOKEN"); // true
 * isSecretName("LC_ALL"); // false
 * ```
 */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)/i;

/**
 * The values a provider's configuration hands the bridge that must never appear in
 * anything it writes (E6): its extra environment values, its request headers (and the
 * token of a `Bearer …` header alone), the credentials its `args` carry (see
 * {@link redactArgs}), and the username, password (as written and
 * percent-decoded) and query values of its URL. The registry refuses a URL with
 * credentials, but a definition may reach the bridge without it.
 * The runtime redacts the same values from everything it writes.
 *
 * @example
 * ```ts
 * providerSecrets({ transport: "stdio", namespace: "acer", program: "acer", args: [], env: { ACER_TOKEN: "t0ken-value" } }); // ["t0ken-value"]
 * ```
 */
export function providerSecrets(definition: McpProviderDefinition): readonly string[] {
  const values =
    definition.transport === "stdio" ? [...Object.values(definition.env ?? {}), ...argSecrets(definition.args)] : Object.values(definition.headers ?? {});
  const secrets = new Set<string>();
  for (const value of values) {
    if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) continue;
    secrets.add(value);
    // "Bearer abc…": the token alone may be echoed back without its scheme.
    for (const part of value.split(/\s+/)) if (part.length >= MIN_SECRET_LENGTH) secrets.add(part);
  }
  if (definition.transport === "streamable_http") {
    try {
      const url = new URL(definition.url);
      // Both forms of each: the URL echoes them encoded, a server or fetch may decode them.
      // Shorter than the bound, a user name or password is too common a string: redacting
      // it would garble every message ("e" in each word). Such a URL is refused at connect
      // anyway, and never sent.
      for (const part of [url.password, url.username]) {
        for (const form of [part, decodedUrlPart(part)]) if (form.length >= MIN_SECRET_LENGTH) secrets.add(form);
      }
      for (const value of url.searchParams.values()) if (value.length >= MIN_SECRET_LENGTH) secrets.add(value);
    } catch {
      // An unparsable URL is reported by the connection; it has no parts to redact here.
    }
  }
  return [...secrets].sort((a, b) => b.length - a.length);
}

function decodedUrlPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    // A stray "%" that is no escape: the text as written is the secret.
    return part;
  }
}

/** Replaces every occurrence of a secret in `text`, and every URL's password, with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let result = redactUrlCredentials(text);
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(MASK);
  return result;
}

// `scheme://user:password@host`: the password runs to the last "@" of the authority (some
// drivers accept a raw "@" in it); the scheme is bounded so that a long word costs no more
// than a short one.
const URL_CREDENTIALS = /([A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^\s:@/?#"<>]*:)([^\s/?#"<>]+)@/g;

/**
 * Masks the password of every `scheme://user:password@host` in `text` (E6): a URL with
 * credentials is recognized without being configured anywhere.
 *
 * @example
 * ```ts
 * redactUrlCredentials("DATABASE_URL=postgres://app:hunter2@db/app"); // "DATABASE_URL=postgres://app:[redacted]@db/app"
 * ```
 */
export function redactUrlCredentials(text: string): string {
  if (!text.includes("://")) return text;
  URL_CREDENTIALS.lastIndex = 0;
  return text.replace(URL_CREDENTIALS, `$1${MASK}@`);
}

// Flags whose separate next argument is the secret (`--token VALUE`): only names that end in
// a credential word, since `--auth` or `--session` are as often switches before a positional.
const SECRET_FLAG = /^--?[A-Za-z][\w.-]*(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i;
// `--token=VALUE`, `TOKEN=VALUE`, and a header given as an argument (`Authorization: Bearer …`).
const NAMED_VALUE = /^(-{0,2}[A-Za-z][\w.-]*=|[A-Za-z][\w-]*:[ \t]*)(.+)$/s;
// Values that are credentials by their form: API keys of well-known services, JWTs.
const SECRET_VALUE =
  /^(sk|pk|rk)-[\w-]{16,}$|^gh[pousr]_\w{20,}$|^github_pat_\w{20,}$|^glpat-[\w-]{16,}$|^xox[abprs]-[\w-]{10,}$|^AKIA[0-9A-Z]{16}$|^eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}$/;

interface ArgReading {
  readonly shown: string;
  readonly secret?: string;
}

function readArgs(args: readonly string[]): ArgReading[] {
  const readings: ArgReading[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    const named = NAMED_VALUE.exec(arg);
    if (named && isSecretName(named[1]!.replace(/[=:\s]+$/, ""))) {
      readings.push({ shown: `${named[1]}${MASK}`, secret: named[2]! });
    } else if (SECRET_VALUE.test(arg)) {
      readings.push({ shown: MASK, secret: arg });
    } else {
      const shown = redactUrlCredentials(arg);
      readings.push(shown === arg ? { shown } : { shown, secret: urlPassword(arg) });
    }
    const next = args[index + 1];
    if (SECRET_FLAG.test(arg) && next !== undefined && !next.startsWith("-")) {
      readings.push({ shown: MASK, secret: next });
      index++;
    }
  }
  return readings;
}

/** The password of the first `scheme://user:password@host` in `arg` (what {@link redactUrlCredentials} masks). */
function urlPassword(arg: string): string {
  return new RegExp(URL_CREDENTIALS.source).exec(arg)?.[2] ?? "";
}

/** The credentials a stdio launch's arguments carry: each named value, token and URL password. */
function argSecrets(args: readonly string[]): string[] {
  const secrets: string[] = [];
  for (const reading of readArgs(args)) {
    if (reading.secret === undefined) continue;
    secrets.push(reading.secret);
    if (reading.secret.includes("%")) secrets.push(decodedUrlPart(reading.secret));
  }
  return secrets;
}

/**
 * A stdio launch's arguments as they may be shown (E6): a URL's password, the value of a
 * secret-named flag or variable (`--token=…`, `--api-key …`, `API_KEY=…`), a header
 * (`Authorization: Bearer …`) and a value that has the form of a well-known API key or a
 * JWT are masked. Credentials belong in `env` or `headers`: arguments show in process
 * listings. The bridge also redacts these values from everything it writes.
 *
 * @example
 * ```ts
 * redactArgs(["serve", "--token=abc123", "postgres://app:pw@db/app"]); // ["serve", "--token=[redacted]", "postgres://app:[redacted]@db/app"]
 * ```
 */
export function redactArgs(args: readonly string[]): string[] {
  return readArgs(args).map((reading) => reading.shown);
}

/**
 * A provider URL as messages show it (E6): scheme, host, port and path as written, the
 * user information and every query value masked, the fragment left out.
 *
 * @example
 * ```ts
 * redactUrl("http://me:pw@127.0.0.1:8080/mcp?token=abc&mode=x"); // "http://[redacted]@127.0.0.1:8080/mcp?token=[redacted]&mode=[redacted]"
 * ```
 */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "(invalid URL)";
  }
  const userinfo = url.username !== "" || url.password !== "" ? `${MASK}@` : "";
  const keys = [...url.searchParams.keys()];
  const query = keys.length > 0 ? `?${keys.map((key) => `${encodeURIComponent(key)}=${MASK}`).join("&")}` : "";
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}${query}`;
}
