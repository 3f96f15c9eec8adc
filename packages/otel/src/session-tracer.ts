import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { RUNTIME_ERROR_CODES, type RuntimeEvent } from "@openworker/runtime";
import { contentAttribute } from "./content.js";
import type { RuntimeMetrics } from "./metrics.js";
import { ATTRIBUTES, LIMITS, OPERATIONS, SPAN_EVENTS } from "./names.js";

/** What one session's tracer needs from its {@link RuntimeTelemetry}. */
export interface SessionTracerOptions {
  readonly tracer: Tracer | undefined;
  readonly metrics: RuntimeMetrics | undefined;
  readonly agentName: string;
  /** Characters of redacted arguments and results to put on tool spans; `undefined`: none. */
  readonly contentLength: number | undefined;
}

interface TurnState {
  readonly span: Span | undefined;
  readonly context: Context | undefined;
  readonly started: number;
  attempt: AttemptState | undefined;
  attempts: number;
}

interface AttemptState {
  readonly span: Span | undefined;
  readonly started: number;
  readonly provider: string;
  readonly model: string;
}

interface CallState {
  readonly span: Span | undefined;
  readonly started: number;
  readonly kind: "native" | "mcp" | undefined;
  /** The approval step was reached, so the arguments were valid (E5). */
  validated: boolean;
}

// Calls the arguments never reached a decision for because they failed validation (E5).
const VALIDATION_CODES: ReadonlySet<string> = new Set([RUNTIME_ERROR_CODES.ARGUMENTS_INVALID, RUNTIME_ERROR_CODES.ARGUMENTS_TOO_LARGE]);

/**
 * Turns one session's events into spans and measurements: a span per turn
 * (`invoke_agent`), per model attempt (`chat`, a child of its turn) and per governed call
 * (`execute_tool`, a child of its turn; a host-driven call, which has no turn, is a child
 * of whatever span is active where the host called). Approval, validation, the wait before
 * the start, limit breaches and diagnostics are span events. Only codes, names, ids,
 * outcomes and counts are read from the events; texts (messages, diagnostics) never.
 */
export class SessionTracer {
  readonly #options: SessionTracerOptions;
  readonly #turns = new Map<string, TurnState>();
  readonly #calls = new Map<string, CallState>();
  /** The model turn running now (one at a time per session): diagnostics carry no turn id. */
  #currentTurn: TurnState | undefined;

  constructor(options: SessionTracerOptions) {
    this.#options = options;
  }

  /** The listener to subscribe; events of other types are ignored. */
  readonly listener = (event: RuntimeEvent): void => {
    switch (event.type) {
      case "turn_started":
        return this.#turnStarted(event);
      case "attempt_started":
        return this.#attemptStarted(event);
      case "attempt_finished":
        return this.#attemptFinished(event);
      case "call_requested":
        return this.#callRequested(event);
      case "approval_needed":
        return this.#approvalNeeded(event);
      case "approval_decided":
        return this.#approvalDecided(event);
      case "elicitation_asked":
      case "elicitation_answered":
        return this.#elicitation(event);
      case "call_started":
        return this.#callStarted(event);
      case "call_finished":
        return this.#callFinished(event);
      case "diagnostic":
        return this.#diagnostic(event);
      case "turn_finished":
        return this.#turnFinished(event);
      default:
        return undefined;
    }
  };

  /** Ends what is still open (the session's subscription is ending): unended spans are never exported. */
  endAll(): void {
    for (const call of this.#calls.values()) call.span?.end();
    for (const turn of this.#turns.values()) {
      turn.attempt?.span?.end();
      turn.span?.end();
    }
    this.#calls.clear();
    this.#turns.clear();
    this.#currentTurn = undefined;
  }

  #turnStarted(event: Extract<RuntimeEvent, { type: "turn_started" }>): void {
    const { tracer, agentName } = this.#options;
    // The host's active span, if it has a context manager: the turn is part of its request.
    const parent = context.active();
    const span = tracer?.startSpan(
      `${OPERATIONS.turn} ${agentName}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTRIBUTES.operationName]: OPERATIONS.turn,
          [ATTRIBUTES.agentName]: agentName,
          [ATTRIBUTES.conversationId]: event.sessionId,
          [ATTRIBUTES.sessionId]: event.sessionId,
          [ATTRIBUTES.turnId]: event.turnId,
        },
      },
      parent,
    );
    const turn: TurnState = { span, context: span && trace.setSpan(parent, span), started: performance.now(), attempt: undefined, attempts: 0 };
    this.#turns.set(event.turnId, turn);
    this.#currentTurn = turn;
  }

  #attemptStarted(event: Extract<RuntimeEvent, { type: "attempt_started" }>): void {
    const turn = this.#turns.get(event.turnId);
    if (turn === undefined) return;
    turn.attempts = event.attempt;
    if (event.attempt === 1) turn.span?.setAttributes({ [ATTRIBUTES.providerName]: event.provider, [ATTRIBUTES.requestModel]: event.model });
    const span = this.#options.tracer?.startSpan(
      `${OPERATIONS.attempt} ${event.model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTRIBUTES.operationName]: OPERATIONS.attempt,
          [ATTRIBUTES.providerName]: event.provider,
          [ATTRIBUTES.requestModel]: event.model,
          [ATTRIBUTES.conversationId]: event.sessionId,
          [ATTRIBUTES.sessionId]: event.sessionId,
          [ATTRIBUTES.turnId]: event.turnId,
          [ATTRIBUTES.attempt]: event.attempt,
        },
      },
      turn.context,
    );
    turn.attempt = { span, started: performance.now(), provider: event.provider, model: event.model };
  }

  #attemptFinished(event: Extract<RuntimeEvent, { type: "attempt_finished" }>): void {
    const turn = this.#turns.get(event.turnId);
    const attempt = turn?.attempt;
    if (turn === undefined || attempt === undefined) return;
    turn.attempt = undefined;
    attempt.span?.setAttribute(ATTRIBUTES.attemptToolCalls, event.toolCalls);
    const { inputTokens, outputTokens } = event.usage ?? {};
    if (inputTokens !== undefined) {
      attempt.span?.setAttribute(ATTRIBUTES.inputTokens, inputTokens);
      this.#options.metrics?.tokens(inputTokens, "input", attempt.provider, attempt.model);
    }
    if (outputTokens !== undefined) {
      attempt.span?.setAttribute(ATTRIBUTES.outputTokens, outputTokens);
      this.#options.metrics?.tokens(outputTokens, "output", attempt.provider, attempt.model);
    }
    if (event.code === RUNTIME_ERROR_CODES.MODEL_TOO_MANY_CALLS) this.#breach(attempt.span, LIMITS.callsPerAnswer, event.code, undefined);
    this.#endAttempt(attempt, event.code);
  }

  #endAttempt(attempt: AttemptState, errorType: string | undefined): void {
    failed(attempt.span, errorType);
    attempt.span?.end();
    this.#options.metrics?.attempt(secondsSince(attempt.started), attempt.provider, attempt.model, errorType);
  }

  #callRequested(event: Extract<RuntimeEvent, { type: "call_requested" }>): void {
    const { tracer, contentLength } = this.#options;
    const turn = this.#turns.get(event.turnId);
    let span: Span | undefined;
    if (tracer !== undefined) {
      const attributes: Attributes = {
        [ATTRIBUTES.operationName]: OPERATIONS.call,
        [ATTRIBUTES.toolName]: event.qualifiedName,
        [ATTRIBUTES.toolCallId]: event.callId,
        [ATTRIBUTES.sessionId]: event.sessionId,
        [ATTRIBUTES.turnId]: event.turnId,
      };
      if (event.kind !== undefined) attributes[ATTRIBUTES.toolKind] = event.kind;
      if (turn !== undefined) attributes[ATTRIBUTES.attempt] = turn.attempts;
      if (contentLength !== undefined) attributes[ATTRIBUTES.toolCallArguments] = contentAttribute(event.args, contentLength);
      span = tracer.startSpan(`${OPERATIONS.call} ${event.qualifiedName}`, { kind: SpanKind.INTERNAL, attributes }, turn?.context ?? context.active());
    }
    this.#calls.set(event.callId, { span, started: performance.now(), kind: event.kind, validated: false });
  }

  #approvalNeeded(event: Extract<RuntimeEvent, { type: "approval_needed" }>): void {
    const call = this.#calls.get(event.callId);
    if (call === undefined) return;
    validated(call);
    call.span?.addEvent(SPAN_EVENTS.approvalRequested);
  }

  #approvalDecided(event: Extract<RuntimeEvent, { type: "approval_decided" }>): void {
    const call = this.#calls.get(event.callId);
    if (call === undefined) return;
    validated(call);
    call.span?.addEvent(SPAN_EVENTS.approvalDecided, {
      [ATTRIBUTES.approvalDecision]: event.approved ? "approved" : "denied",
      [ATTRIBUTES.approvalBy]: event.by,
      [ATTRIBUTES.approvalScope]: event.scope,
    });
    if (!event.approved) this.#options.metrics?.denial(event.qualifiedName, event.by);
  }

  /** What the call's provider asked the user (M9), and how it was answered: never the message or the values. */
  #elicitation(event: Extract<RuntimeEvent, { type: "elicitation_asked" | "elicitation_answered" }>): void {
    const span = this.#calls.get(event.callId)?.span;
    if (event.type === "elicitation_asked") span?.addEvent(SPAN_EVENTS.elicitationAsked, { [ATTRIBUTES.elicitationMode]: event.mode });
    else span?.addEvent(SPAN_EVENTS.elicitationAnswered, { [ATTRIBUTES.elicitationAction]: event.action, [ATTRIBUTES.elicitationBy]: event.by });
  }

  #callStarted(event: Extract<RuntimeEvent, { type: "call_started" }>): void {
    const call = this.#calls.get(event.callId);
    if (call?.span === undefined) return;
    // What the call waited for before it ran: a person's answer, the journal's durable start.
    call.span.setAttribute(ATTRIBUTES.callWaitMs, performance.now() - call.started);
    call.span.addEvent(SPAN_EVENTS.callStarted);
  }

  #callFinished(event: Extract<RuntimeEvent, { type: "call_finished" }>): void {
    const call = this.#calls.get(event.callId);
    // A call that was running before the session was instrumented: not traced, not counted.
    if (call === undefined) return;
    this.#calls.delete(event.callId);
    const { span } = call;
    const errorType = event.outcome === "succeeded" ? undefined : (event.code ?? event.outcome);
    if (event.code !== undefined && VALIDATION_CODES.has(event.code) && !call.validated) {
      span?.addEvent(SPAN_EVENTS.validation, { [ATTRIBUTES.validationResult]: "failed", [ATTRIBUTES.errorType]: event.code });
    }
    const limit =
      event.limit ??
      (event.outcome === "timed_out" ? LIMITS.callTimeout : event.code === RUNTIME_ERROR_CODES.TOO_MANY_CALLS ? LIMITS.callsPerAttempt : undefined);
    if (limit !== undefined) this.#breach(span, limit, errorType, event.qualifiedName);
    if (span !== undefined) {
      span.setAttribute(ATTRIBUTES.callOutcome, event.outcome);
      const { contentLength } = this.#options;
      if (contentLength !== undefined && event.result !== undefined)
        span.setAttribute(ATTRIBUTES.toolCallResult, contentAttribute(event.result, contentLength));
      failed(span, errorType);
      span.end();
    }
    this.#options.metrics?.call(secondsSince(call.started), event.qualifiedName, call.kind, event.outcome, errorType);
  }

  #diagnostic(event: Extract<RuntimeEvent, { type: "diagnostic" }>): void {
    // The code and the provider only: a diagnostic's message quotes tools and servers.
    const attributes: Attributes = { [ATTRIBUTES.diagnosticCode]: event.code };
    if (event.provider !== undefined) attributes[ATTRIBUTES.mcpProvider] = event.provider;
    this.#currentTurn?.span?.addEvent(SPAN_EVENTS.diagnostic, attributes);
    if (event.code === RUNTIME_ERROR_CODES.PROVIDER_UNAVAILABLE && event.provider !== undefined) this.#options.metrics?.providerUnavailable(event.provider);
  }

  #turnFinished(event: Extract<RuntimeEvent, { type: "turn_finished" }>): void {
    const turn = this.#turns.get(event.turnId);
    if (turn === undefined) return;
    this.#turns.delete(event.turnId);
    if (this.#currentTurn === turn) this.#currentTurn = undefined;
    const errorType = event.completed ? undefined : (event.code ?? event.reason);
    // An attempt still open was cancelled: it gets no `attempt_finished`.
    if (turn.attempt !== undefined) this.#endAttempt(turn.attempt, errorType);
    if (event.code === RUNTIME_ERROR_CODES.TURN_ATTEMPTS_EXHAUSTED) this.#breach(turn.span, LIMITS.attemptsPerTurn, event.code, undefined);
    turn.span?.setAttribute(ATTRIBUTES.turnReason, event.reason);
    failed(turn.span, errorType);
    turn.span?.end();
    this.#options.metrics?.turn(secondsSince(turn.started), this.#options.agentName, event.reason, errorType);
  }

  #breach(span: Span | undefined, limit: string, errorType: string | undefined, toolName: string | undefined): void {
    span?.addEvent(SPAN_EVENTS.limitBreach, { [ATTRIBUTES.limitName]: limit, ...(errorType === undefined ? {} : { [ATTRIBUTES.errorType]: errorType }) });
    this.#options.metrics?.breach(limit, toolName);
  }
}

/**
 * The call reached its approval step: the pipeline validates the arguments before anyone
 * is asked or any policy decides (E5), so they passed. Marked once, before the approval.
 */
function validated(call: CallState): void {
  if (call.validated) return;
  call.validated = true;
  call.span?.addEvent(SPAN_EVENTS.validation, { [ATTRIBUTES.validationResult]: "passed" });
}

/** Marks a span failed with its `error.type`, the code only: messages can quote what a tool said. */
function failed(span: Span | undefined, errorType: string | undefined): void {
  if (span === undefined || errorType === undefined) return;
  span.setAttribute(ATTRIBUTES.errorType, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
}

function secondsSince(started: number): number {
  return (performance.now() - started) / 1000;
}
