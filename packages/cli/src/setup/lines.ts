import { createInterface, type Interface } from "node:readline";
import type { Prompter } from "./approver.js";

/**
 * Reads the terminal (or piped stdin) line by line for the interactive loop and for
 * approval prompts alike. Lines are queued, so piped input that arrives all at once is
 * not lost between questions. `undefined` means the input ended (Ctrl-D, EOF).
 */
export class LineReader implements Prompter {
  readonly #rl: Interface;
  readonly #output: NodeJS.WritableStream;
  readonly #lines: string[] = [];
  readonly #waiters: ((line: string | undefined) => void)[] = [];
  #ended = false;

  constructor(input: NodeJS.ReadableStream & { isTTY?: boolean }, output: NodeJS.WritableStream) {
    this.#output = output;
    this.#rl = createInterface({ input, output, terminal: input.isTTY === true });
    this.#rl.on("line", (line) => {
      const waiter = this.#waiters.shift();
      if (waiter) waiter(line);
      else this.#lines.push(line);
    });
    this.#rl.on("close", () => {
      this.#ended = true;
      for (const waiter of this.#waiters.splice(0)) waiter(undefined);
    });
  }

  /** Calls `handler` on Ctrl-C typed at the terminal (readline catches it in raw mode). */
  onInterrupt(handler: () => void): void {
    this.#rl.on("SIGINT", handler);
  }

  /** Shows `prompt` and waits for the next line; abandoned (undefined) when `signal` aborts. */
  question(prompt: string, signal?: AbortSignal): Promise<string | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    const queued = this.#lines.shift();
    // Piped input may end while queued lines remain; a closed readline refuses to prompt.
    if (this.#ended) this.#output.write(prompt);
    else {
      this.#rl.setPrompt(prompt);
      this.#rl.prompt();
    }
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (line: string | undefined) => {
        signal?.removeEventListener("abort", abandon);
        resolve(line);
      };
      const abandon = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index !== -1) this.#waiters.splice(index, 1);
        resolve(undefined);
      };
      signal?.addEventListener("abort", abandon, { once: true });
      this.#waiters.push(waiter);
    });
  }

  close(): void {
    this.#rl.close();
  }
}
