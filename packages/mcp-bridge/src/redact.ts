import type { McpProviderDefinition } from "@openworker/registry";

const MIN_SECRET_LENGTH = 4;

/**
 * The values a provider's configuration hands the bridge that must never appear in
 * anything it writes (E6): its extra environment values, its request headers (and the
 * token of a `Bearer …` header alone), and the username, password (as written and
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
  const values = definition.transport === "stdio" ? Object.values(definition.env ?? {}) : Object.values(definition.headers ?? {});
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

/** Replaces every occurrence of a secret in `text` with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join("[redacted]");
  return result;
}

/**
 * How a provider is named in messages and the inventory: the program's file name for
 * stdio (never its arguments or environment), the URL's origin and path for HTTP
 * (never its credentials or query).
 */
export function describeLaunch(definition: McpProviderDefinition): string {
  if (definition.transport === "stdio") {
    const program = definition.program.split(/[\\/]/).pop() ?? definition.program;
    return `stdio: ${program}`;
  }
  try {
    const url = new URL(definition.url);
    return `streamable_http: ${url.origin}${url.pathname}`;
  } catch {
    return "streamable_http: (invalid URL)";
  }
}
