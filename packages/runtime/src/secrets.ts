import { providerSecrets } from "@openworker/mcp-bridge";
import type { McpProviderDefinition } from "@openworker/registry";

// Environment variables whose values are treated as secrets (E6).
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)/i;
// Shorter values would redact ordinary words; real credentials are longer.
const MIN_SECRET_LENGTH = 8;
const MASK = "[redacted]";

/**
 * Removes every secret the runtime was handed (the bridge's `providerSecrets` of each
 * MCP provider, secret-looking environment variables, and the host's own list) from what
 * it writes: progress, results, errors and journal records (E6).
 */
export class Redactor {
  private readonly pattern: RegExp | undefined;

  constructor(secrets: Iterable<string>) {
    const kept = [...secrets].filter((value) => value.length >= MIN_SECRET_LENGTH);
    // A secret with a quote, a backslash or a control character appears escaped in JSON text
    // (a result's text for the model is its JSON): its escaped form is a secret too.
    const escaped = kept.map((value) => JSON.stringify(value).slice(1, -1)).filter((text, index) => text !== kept[index]);
    const values = [...new Set([...kept, ...escaped])].sort((a, b) => b.length - a.length);
    this.pattern = values.length === 0 ? undefined : new RegExp(values.map(escapeRegExp).join("|"), "g");
  }

  /** The secrets of a registry's providers, the process environment and the host's extras. */
  static fromSources(providers: readonly McpProviderDefinition[], environment: NodeJS.ProcessEnv, extra: readonly string[] = []): Redactor {
    const secrets: string[] = [...extra];
    for (const provider of providers) secrets.push(...providerSecrets(provider));
    for (const [name, value] of Object.entries(environment)) {
      if (value && SECRET_NAME.test(name)) secrets.push(value);
    }
    return new Redactor(secrets);
  }

  /** True when there is nothing to redact (the hot path skips all work). */
  get empty(): boolean {
    return this.pattern === undefined;
  }

  text(value: string): string {
    if (!this.pattern) return value;
    this.pattern.lastIndex = 0;
    return value.replace(this.pattern, MASK);
  }

  /** Redacts every string (and key) inside a JSON value; returns the same object when nothing changed. */
  json<T>(value: T): T {
    if (!this.pattern) return value;
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === "string") return this.text(value);
    if (Array.isArray(value)) {
      let changed = false;
      const out = value.map((item) => {
        const next = this.walk(item);
        if (next !== item) changed = true;
        return next;
      });
      return changed ? out : value;
    }
    if (typeof value === "object" && value !== null) {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const nextKey = this.text(key);
        const next = this.walk(item);
        if (next !== item || nextKey !== key) changed = true;
        // An own "__proto__" key (JSON.parse makes one) stays a key: assigned, it would set
        // the copy's prototype and vanish from what is journaled.
        if (nextKey === "__proto__") Object.defineProperty(out, nextKey, { value: next, enumerable: true, writable: true, configurable: true });
        else out[nextKey] = next;
      }
      return changed ? out : value;
    }
    return value;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
