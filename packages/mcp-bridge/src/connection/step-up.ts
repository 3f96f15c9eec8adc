import { UnauthorizedError, type StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { MCP_ERROR_CODES } from "../codes.js";
import type { ResolvedOptions } from "../options.js";
import { redact } from "../redact.js";
import type { McpTokenStore, StoredAuthorization } from "./authorization.js";
import { authorizeOnce, howToAuthorize, type AuthorizationPurpose } from "./authorize-once.js";

/** Where a call stood before it was sent: what tells a refusal for scope, and a step-up since, apart. */
export interface StepUpMark {
  readonly refusals: number;
  readonly completed: number;
}

/** How a step-up for a refused call ended: retry the call, fail it with `error`, or it was cancelled. */
export type StepUpOutcome = { readonly kind: "authorized" } | { readonly kind: "failed"; readonly error: OpenWorkerError } | { readonly kind: "cancelled" };

/** One host step under way for a provider's tokens, with the calls waiting for it. */
interface RunningStep {
  readonly done: Promise<StepUpOutcome>;
  readonly stop: AbortController;
  waiting: number;
}

/** The step-ups of one token store entry: every session's connection to the provider shares them. */
interface StepUps {
  running: RunningStep | undefined;
  completed: number;
}

const stepUps = new WeakMap<McpTokenStore, Map<string, StepUps>>();

/**
 * M8 step-up during a call: a streamable-HTTP provider that answers a call 403
 * `insufficient_scope` did not run it. The SDK's transport then builds the authorization
 * request for the union of the token's scopes and the ones the server named, and stops
 * at the redirect; here the host's step runs for it (`authorize`, as at connect), the SDK
 * exchanges the code and the new token goes to the store, and the call is sent again,
 * once. Concurrent refused calls of the provider, in any session of the bridge, share one
 * step; a call refused again after it fails without asking again.
 */
export class ScopeStepUp {
  private readonly shared: StepUps;

  constructor(
    private readonly namespace: string,
    private readonly authorization: StoredAuthorization,
    private readonly transport: StreamableHTTPClientTransport,
    private readonly options: ResolvedOptions,
    private readonly secrets: readonly string[],
  ) {
    const store = options.authorization!.store;
    let entries = stepUps.get(store);
    if (entries === undefined) stepUps.set(store, (entries = new Map()));
    const key = `${authorization.tokenKey.namespace} ${authorization.tokenKey.resource}`;
    let shared = entries.get(key);
    if (shared === undefined) entries.set(key, (shared = { running: undefined, completed: 0 }));
    this.shared = shared;
  }

  mark(): StepUpMark {
    return { refusals: this.authorization.scopeRefusals, completed: this.shared.completed };
  }

  /** Whether a send that failed with `error` was refused for scope since `mark` (the server did not run it). */
  refused(error: unknown, mark: StepUpMark): boolean {
    return this.authorization.scopeRefusals > mark.refusals && isAuthRefusal(error);
  }

  /** The scopes the server asked for that the token lacks, as messages name them. */
  get missing(): string {
    const missing = this.authorization.missingScopes;
    return missing.length > 0 ? `the scopes ${missing.join(" ")}` : "wider scopes";
  }

  /**
   * Gets the call refused since `mark` (with `error`) a token with the wider scopes:
   * waits for the host's step of another call, or runs it, within the call's `signal`
   * and `timeoutMs`; a step that completed since `mark` already did.
   */
  async authorize(mark: StepUpMark, error: unknown, signal: AbortSignal | undefined, timeoutMs: number): Promise<StepUpOutcome> {
    if (this.shared.completed > mark.completed) return { kind: "authorized" };
    const running = this.shared.running ?? this.start();
    if (running === undefined) return { kind: "failed", error: this.noStep(error) };
    return this.wait(running, signal, timeoutMs);
  }

  /** Starts the host's step for the flow the SDK built, or undefined when it built none. */
  private start(): RunningStep | undefined {
    if (this.options.authorization?.authorize === undefined || this.authorization.pendingAuthorization === undefined) return undefined;
    const stop = new AbortController();
    const purpose: AuthorizationPurpose = {
      required: this.required().message,
      consequence: `the call needs ${this.missing}, which its token lacks, and was not run`,
    };
    this.authorization.hold();
    const done = authorizeOnce(
      this.namespace,
      { sessionId: "", authorization: this.authorization, transport: this.transport },
      this.options,
      this.secrets,
      stop.signal,
      purpose,
    )
      .then(
        (): StepUpOutcome => {
          this.shared.completed++;
          return { kind: "authorized" };
        },
        (failure: unknown): StepUpOutcome => ({ kind: "failed", error: failure as OpenWorkerError }),
      )
      .finally(() => {
        this.authorization.release();
        this.shared.running = undefined;
      });
    const running: RunningStep = { done, stop, waiting: 0 };
    this.shared.running = running;
    return running;
  }

  /** Waits for `running` within this call's signal and bound; the step stops once no call waits for it. */
  private async wait(running: RunningStep, signal: AbortSignal | undefined, timeoutMs: number): Promise<StepUpOutcome> {
    running.waiting++;
    let timer: NodeJS.Timeout | undefined;
    let leave: (() => void) | undefined;
    const gaveUp = new Promise<StepUpOutcome>((resolve) => {
      const timedOut = () =>
        resolve({
          kind: "failed",
          error: this.failed(
            `the host's authorization step did not finish within the call's ${timeoutMs} ms bound; the call needs ${this.missing} and was not run`,
          ),
        });
      const cancelled = () => resolve({ kind: "cancelled" });
      timer = setTimeout(timedOut, timeoutMs);
      signal?.addEventListener("abort", cancelled, { once: true });
      leave = () => signal?.removeEventListener("abort", cancelled);
      if (signal?.aborted) cancelled();
    });
    try {
      return await Promise.race([running.done, gaveUp]);
    } finally {
      clearTimeout(timer);
      leave?.();
      if (--running.waiting === 0) running.stop.abort(new Error("no call waits for the authorization any more"));
    }
  }

  /** Why no host step could run: the host has none, or the SDK could not build the request (`error`). */
  private noStep(error: unknown): OpenWorkerError {
    if (this.options.authorization?.authorize === undefined) return this.required();
    const why = error instanceof Error ? error.message : String(error);
    return this.failed(
      `the provider refused the call for insufficient scope and no wider authorization could be asked for (${why}); the call needs ${this.missing} and was not run`,
    );
  }

  private required(): OpenWorkerError {
    return new OpenWorkerError(
      MCP_ERROR_CODES.authorizationRequired,
      `MCP provider "${this.namespace}" refused the call for insufficient scope: it needs ${this.missing}, which its token lacks, and the host has no step ` +
        `to ask the user for them; ${howToAuthorize(this.namespace, this.options)}; the call was not run`,
      { details: { namespace: this.namespace } },
    );
  }

  private failed(problem: string): OpenWorkerError {
    return new OpenWorkerError(
      MCP_ERROR_CODES.authorizationFailed,
      redact(`MCP provider "${this.namespace}": authorization failed: ${problem}`, this.secrets),
      {
        details: { namespace: this.namespace },
      },
    );
  }
}

/** Errors the SDK transport throws from its authorization path (it marks them so, `Symbol.for`, across SDK copies). */
export function isAuthRefusal(error: unknown): boolean {
  return error instanceof UnauthorizedError || (typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[AUTH_SEAM] === true);
}

const AUTH_SEAM = Symbol.for("mcp.authSeamEscape");
