import type { ProgressEvent } from "@openworker/tools-sdk";
import type { CallOutcome } from "@openworker/tools-sdk/execution";

/** Events for user interfaces, in the order a turn produces them. */
export type RuntimeEvent =
  | { readonly type: "turn_started"; readonly sessionId: string; readonly turnId: string }
  | { readonly type: "attempt_started"; readonly sessionId: string; readonly turnId: string; readonly attempt: number }
  | { readonly type: "approval_needed"; readonly sessionId: string; readonly turnId: string; readonly callId: string; readonly qualifiedName: string }
  | { readonly type: "call_started"; readonly sessionId: string; readonly turnId: string; readonly callId: string; readonly qualifiedName: string }
  | { readonly type: "call_progress"; readonly sessionId: string; readonly callId: string; readonly event: ProgressEvent }
  | {
      readonly type: "call_finished";
      readonly sessionId: string;
      readonly turnId: string;
      readonly callId: string;
      readonly qualifiedName: string;
      readonly outcome: CallOutcome | "denied";
      readonly code?: string;
    }
  | { readonly type: "message"; readonly sessionId: string; readonly turnId: string; readonly text: string }
  | { readonly type: "diagnostic"; readonly sessionId: string; readonly code: string; readonly message: string }
  | { readonly type: "turn_finished"; readonly sessionId: string; readonly turnId: string; readonly completed: boolean; readonly reason: string };

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
