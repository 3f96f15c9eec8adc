import { OpenWorkerError } from "@openworker/tools-sdk";
import { MCP_ERROR_CODES } from "./codes.js";

/** One cleanup that failed or could not be confirmed. */
export interface CleanupFailure {
  readonly namespace: string;
  readonly message: string;
}

/**
 * Every cleanup a session (or the bridge) requested, and every one that failed (M4).
 * `join()` waits for the cleanups requested so far and rejects while any failure is
 * recorded: failures are never forgotten, so later callers see them too.
 */
export class CleanupLedger {
  private readonly pending = new Set<Promise<void>>();
  private readonly failures: CleanupFailure[] = [];

  constructor(private readonly parent?: CleanupLedger) {}

  /** Records a cleanup; `work` resolves with the failure, or `undefined` when confirmed. */
  track(work: Promise<CleanupFailure | undefined>): void {
    const settled = work.then(
      (failure) => {
        if (failure) this.failures.push(failure);
      },
      (error: unknown) => {
        this.failures.push({ namespace: "(unknown)", message: `cleanup threw: ${String(error)}` });
      },
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
    this.parent?.track(work);
  }

  /** Waits for the cleanups already requested; rejects (sticky) if any failed. */
  async join(): Promise<void> {
    await Promise.all(this.pending);
    if (this.failures.length === 0) return;
    const list = this.failures.map((failure) => `provider "${failure.namespace}": ${failure.message}`).join("; ");
    throw new OpenWorkerError(
      MCP_ERROR_CODES.cleanupUnconfirmed,
      `MCP cleanup could not be confirmed for ${this.failures.length} connection(s): ${list}. ` +
        "Processes or remote sessions may still be running; inspect and end them, then restart the runtime.",
      { details: { failures: [...this.failures] } },
    );
  }
}
