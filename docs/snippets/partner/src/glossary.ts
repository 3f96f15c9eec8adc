import { setTimeout as sleep } from "node:timers/promises";

/** One glossary entry. */
export interface Entry {
  readonly term: string;
  readonly definition: string;
}

/** Where entries come from: an HTTP API, a file, a database. Every read takes the call's signal. */
export interface Glossary {
  search(prefix: string, signal: AbortSignal): Promise<readonly Entry[]>;
}

/** A glossary held in memory, for tests and demos; `delayMs` makes it as slow as a remote service. */
export function memoryGlossary(entries: readonly Entry[], delayMs = 0): Glossary {
  return {
    async search(prefix, signal) {
      await sleep(delayMs, undefined, { signal }); // rejects at once when the call is cancelled
      const wanted = prefix.toLowerCase();
      return entries.filter((entry) => entry.term.toLowerCase().startsWith(wanted));
    },
  };
}
