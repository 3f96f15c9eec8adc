import type { JsonValue, ProgressEvent } from "@openworker/tools-sdk";
import type { CallOutcome, LimitName } from "@openworker/tools-sdk/internal/execution";
import type { ModelUsage } from "./model/types.js";

/**
 * Events for user interfaces and telemetry, in the order a turn produces them. The ids
 * are the journal's (`journal show <sessionId>`). Arguments and results are redacted as
 * the journal keeps them (E6); `modelContext` facts are never in an event (L2).
 */
export type RuntimeEvent =
  | { readonly type: "turn_started"; readonly sessionId: string; readonly turnId: string }
  | {
      readonly type: "attempt_started";
      readonly sessionId: string;
      readonly turnId: string;
      readonly attempt: number;
      /** The model provider's `id` and the model asked. */
      readonly provider: string;
      readonly model: string;
    }
  | {
      readonly type: "attempt_finished";
      readonly sessionId: string;
      readonly turnId: string;
      readonly attempt: number;
      /** Tool calls in the model's answer. */
      readonly toolCalls: number;
      /** Tokens the attempt used, when the endpoint said. */
      readonly usage?: ModelUsage;
      /** Set when the attempt failed (`MODEL_FAILED`, `MODEL_TOO_MANY_CALLS`); a cancelled attempt has no `attempt_finished`. */
      readonly code?: string;
    }
  | {
      readonly type: "call_requested";
      readonly sessionId: string;
      readonly turnId: string;
      readonly callId: string;
      /** The selected tool, or `(unselected)` when the name resolved to none. */
      readonly qualifiedName: string;
      readonly kind?: "native" | "mcp";
      /** The arguments as journaled: redacted (E6), or a note saying why they were omitted. */
      readonly args: JsonValue;
    }
  | { readonly type: "approval_needed"; readonly sessionId: string; readonly turnId: string; readonly callId: string; readonly qualifiedName: string }
  | {
      readonly type: "approval_decided";
      readonly sessionId: string;
      readonly turnId: string;
      readonly callId: string;
      readonly qualifiedName: string;
      readonly approved: boolean;
      readonly by: "person" | "policy" | "bypass";
      readonly scope: "once" | "session";
    }
  | { readonly type: "call_started"; readonly sessionId: string; readonly turnId: string; readonly callId: string; readonly qualifiedName: string }
  | { readonly type: "call_progress"; readonly sessionId: string; readonly callId: string; readonly event: ProgressEvent }
  /** An MCP provider asked the user for input during the call (M9): journaled, then the elicitor is asked. */
  | {
      readonly type: "elicitation_asked";
      readonly sessionId: string;
      readonly callId: string;
      readonly provider: string;
      readonly elicitation: number;
      readonly mode: "form" | "url";
    }
  /** How that request was answered, as the provider received it, and by whom (`runtime`: it failed closed). */
  | {
      readonly type: "elicitation_answered";
      readonly sessionId: string;
      readonly callId: string;
      readonly provider: string;
      readonly elicitation: number;
      readonly action: "accept" | "decline" | "cancel";
      readonly by: "person" | "host" | "runtime";
    }
  | {
      readonly type: "call_finished";
      readonly sessionId: string;
      readonly turnId: string;
      readonly callId: string;
      readonly qualifiedName: string;
      readonly outcome: CallOutcome | "denied";
      readonly code?: string;
      /** Which limit a `limit_exceeded` call broke (E2, E3). */
      readonly limit?: LimitName;
      /** The structured result of a successful call, redacted (E6). */
      readonly result?: JsonValue;
    }
  | { readonly type: "message"; readonly sessionId: string; readonly turnId: string; readonly text: string }
  | {
      readonly type: "diagnostic";
      readonly sessionId: string;
      readonly code: string;
      readonly message: string;
      /** The MCP provider's namespace, for `PROVIDER_UNAVAILABLE`. */
      readonly provider?: string;
    }
  | {
      readonly type: "turn_finished";
      readonly sessionId: string;
      readonly turnId: string;
      readonly completed: boolean;
      readonly reason: string;
      /** The code of the error that stopped the turn (`TurnResult.error`). */
      readonly code?: string;
    };

/** Receives runtime events. A listener that throws is ignored (it cannot break a turn). */
export type RuntimeEventListener = (event: RuntimeEvent) => void;

/** A small synchronous fan-out of events to listeners. */
export class EventHub {
  private readonly listeners = new Set<RuntimeEventListener>();

  subscribe(listener: RuntimeEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether anyone listens: the call path builds no event object for nobody. */
  get active(): boolean {
    return this.listeners.size > 0;
  }

  emit(event: RuntimeEvent): void {
    if (this.listeners.size === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A UI listener's bug must not change what the runtime does.
      }
    }
  }
}
