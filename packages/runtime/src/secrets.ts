import { isSecretName, MIN_SECRET_LENGTH, providerSecrets, redactUrlCredentials } from "@openworker/mcp-bridge";
import type { McpProviderDefinition } from "@openworker/registry";

// A value guessed to be secret only by its variable's name (`*TOKEN*`, `*AUTH*`, …): shorter
// ones are flags and words ("true", "none", "1") that would mask ordinary text.
const MIN_GUESSED_SECRET_LENGTH = 8;
const MASK = "[redacted]";

/**
 * Removes every secret the runtime was handed from what it writes: progress, results,
 * errors, journal records and model messages (E6). Known secrets (the bridge's
 * `providerSecrets` of each MCP provider, the host's list, the model providers' own) are
 * masked from the bridge's `MIN_SECRET_LENGTH` (4 characters) on; values of environment
 * variables whose names look secret from 8; and the password of every
 * `scheme://user:password@host` always.
 */
export class Redactor {
  private readonly pattern: RegExp | undefined;

  constructor(secrets: Iterable<string>, guessed: Iterable<string> = []) {
    const kept = [
      ...[...secrets].filter((value) => value.length >= MIN_SECRET_LENGTH),
      ...[...guessed].filter((value) => value.length >= MIN_GUESSED_SECRET_LENGTH),
    ];
    // A secret with a quote, a backslash or a control character appears escaped in JSON text
    // (a result's text for the model is its JSON): its escaped form is a secret too.
    const escaped = kept.map((value) => JSON.stringify(value).slice(1, -1)).filter((text, index) => text !== kept[index]);
    const values = [...new Set([...kept, ...escaped])].sort((a, b) => b.length - a.length);
    this.pattern = values.length === 0 ? undefined : new RegExp(values.map(escapeRegExp).join("|"), "g");
  }

  /** The secrets of a registry's providers, the process environment and the host's extras. */
  static fromSources(providers: readonly McpProviderDefinition[], environment: NodeJS.ProcessEnv, extra: readonly string[] = []): Redactor {
    const known: string[] = [...extra];
    for (const provider of providers) known.push(...providerSecrets(provider));
    const guessed: string[] = [];
    for (const [name, value] of Object.entries(environment)) {
      if (value && isSecretName(name)) guessed.push(value);
    }
    return new Redactor(known, guessed);
  }

  text(value: string): string {
    let text = value;
    if (this.pattern) {
      this.pattern.lastIndex = 0;
      text = text.replace(this.pattern, MASK);
    }
    return redactUrlCredentials(text);
  }

  /** Redacts every string (and key) inside a JSON value; returns the same object when nothing changed. */
  json<T>(value: T): T {
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === "string") return this.text(value);
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let index = 0; index < value.length; index++) {
        const next = this.walk(value[index]);
        if (next !== value[index]) (out ??= value.slice())[index] = next;
      }
      return out ?? value;
    }
    if (typeof value === "object" && value !== null) {
      // Every result goes through here: the copy is made only once something changed.
      const entries = Object.entries(value);
      let out: Record<string, unknown> | undefined;
      for (let index = 0; index < entries.length; index++) {
        const [key, item] = entries[index]!;
        const nextKey = this.text(key);
        const next = this.walk(item);
        if (out === undefined) {
          if (next === item && nextKey === key) continue;
          out = {};
          for (let earlier = 0; earlier < index; earlier++) assign(out, entries[earlier]![0], entries[earlier]![1]);
        }
        assign(out, nextKey, next);
      }
      return out ?? value;
    }
    return value;
  }
}

/**
 * Sets `key` on a copy. An own "__proto__" key (JSON.parse makes one) stays a key:
 * assigned, it would set the copy's prototype and vanish from what is journaled.
 */
function assign(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
