import { OpenWorkerError } from "@openworker/tools-sdk";
import { CLI_ERROR_CODES } from "./errors.js";

/** What asked a command to stop from outside. */
export type StopCause = "SIGINT" | "SIGTERM" | "SIGHUP" | "output closed";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Everything that asks a running command to stop from outside, turned into one
 * `AbortSignal`: Ctrl-C (SIGINT), SIGTERM, SIGHUP, and the reader of stdout going away
 * (`cli | head -1`: the next write fails with EPIPE). A command passes the signal to
 * what it runs (a turn, a call, a discovery, a server) and then closes its runtime as on
 * any other exit, so sessions end with their records and MCP processes are ended and
 * verified (M4) instead of being left to the operating system.
 *
 * While a command runs these listeners replace Node's default of exiting at once. A
 * command that is slow to stop (its cleanup is bounded, see the bridge's grace periods)
 * is told so on stderr; the third interrupt after the stop exits at once (the bridge's
 * exit hook still kills the process groups it started).
 */
export class StopRequests {
  readonly #controller = new AbortController();
  readonly #note: (text: string) => void;
  readonly #listeners = new Map<NodeJS.Signals, () => void>();
  #ctrlC: (() => void) | undefined;
  #afterStop = 0;

  constructor(note: (text: string) => void) {
    this.#note = note;
    for (const name of SIGNALS) {
      const listener = () => this.#onSignal(name);
      this.#listeners.set(name, listener);
      process.on(name, listener);
    }
  }

  /** Aborted when the command should stop; its reason is a `CLI_INTERRUPTED` error naming the cause. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * Routes Ctrl-C to `handler` instead of stopping (`run`: the first cancels the turn, the
   * second quits), until the returned function is called. SIGTERM, SIGHUP and a closed
   * output still stop.
   */
  takeCtrlC(handler: () => void): () => void {
    this.#ctrlC = handler;
    return () => {
      if (this.#ctrlC === handler) this.#ctrlC = undefined;
    };
  }

  /** stdout's reader went away: nothing more can be shown, so the command stops. */
  outputClosed(): void {
    this.stop("output closed");
  }

  /** Asks the command to stop (idempotent: the first cause is the reason). */
  stop(cause: StopCause): void {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(interruptedError(cause));
  }

  /** Removes the signal listeners: Node's defaults apply again. */
  dispose(): void {
    for (const [name, listener] of this.#listeners) process.off(name, listener);
    this.#listeners.clear();
  }

  #onSignal(name: (typeof SIGNALS)[number]): void {
    if (name === "SIGINT" && this.#ctrlC && !this.#controller.signal.aborted) {
      this.#ctrlC();
      return;
    }
    if (!this.#controller.signal.aborted) {
      this.stop(name);
      return;
    }
    this.#afterStop += 1;
    if (this.#afterStop >= 3) {
      this.#note(`${name} again: exiting without waiting for the cleanup to finish`);
      process.exit(128 + (name === "SIGINT" ? 2 : name === "SIGTERM" ? 15 : 1));
    }
    this.#note(`still stopping: closing sessions and ending MCP processes (${3 - this.#afterStop} more to exit at once)`);
  }
}

/** The `CLI_INTERRUPTED` error a stop by `cause` ends its command with (`error CLI_INTERRUPTED: …`; its exit code is 128 + the signal, see `exitCodeFor`). */
export function interruptedError(cause: StopCause): OpenWorkerError {
  return new OpenWorkerError(CLI_ERROR_CODES.INTERRUPTED, describe(cause), { details: { cause } });
}

function describe(cause: StopCause): string {
  switch (cause) {
    case "SIGINT":
      return "cancelled by the user (Ctrl-C)";
    case "SIGTERM":
    case "SIGHUP":
      return `stopped by ${cause}`;
    case "output closed":
      return "stopped: the output was closed (the program reading it exited)";
  }
}
