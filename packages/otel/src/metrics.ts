import type { Counter, Histogram, Meter } from "@opentelemetry/api";
import { ATTRIBUTES, METRICS, OPERATIONS } from "./names.js";

// The GenAI conventions' advice for operation durations (seconds) and token counts.
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/** The instruments of one meter, created once per {@link RuntimeTelemetry} and shared by its sessions. */
export class RuntimeMetrics {
  readonly #modelDuration: Histogram;
  readonly #tokenUsage: Histogram;
  readonly #turnDuration: Histogram;
  readonly #toolDuration: Histogram;
  readonly #toolCalls: Counter;
  readonly #denials: Counter;
  readonly #breaches: Counter;
  readonly #unavailable: Counter;

  constructor(meter: Meter) {
    const advice = { explicitBucketBoundaries: DURATION_BUCKETS };
    this.#modelDuration = meter.createHistogram(METRICS.modelDuration, { unit: "s", description: "Duration of model attempts (chat).", advice });
    this.#tokenUsage = meter.createHistogram(METRICS.tokenUsage, {
      unit: "{token}",
      description: "Tokens model attempts used, as their endpoints counted them.",
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    this.#turnDuration = meter.createHistogram(METRICS.turnDuration, { unit: "s", description: "Duration of turns (invoke_agent).", advice });
    this.#toolDuration = meter.createHistogram(METRICS.toolDuration, {
      unit: "s",
      description: "Duration of governed tool calls, from request to terminal record.",
      advice,
    });
    this.#toolCalls = meter.createCounter(METRICS.toolCalls, { unit: "{call}", description: "Governed tool calls by outcome." });
    this.#denials = meter.createCounter(METRICS.approvalDenials, { unit: "{call}", description: "Calls denied at approval, by who denied them." });
    this.#breaches = meter.createCounter(METRICS.limitBreaches, { unit: "{breach}", description: "Limit breaches, by limit." });
    this.#unavailable = meter.createCounter(METRICS.providersUnavailable, {
      unit: "{provider}",
      description: "MCP providers found unavailable when a turn was prepared.",
    });
  }

  attempt(seconds: number, provider: string, model: string, errorType: string | undefined): void {
    const attributes = {
      [ATTRIBUTES.operationName]: OPERATIONS.attempt,
      [ATTRIBUTES.providerName]: provider,
      [ATTRIBUTES.requestModel]: model,
      ...(errorType === undefined ? {} : { [ATTRIBUTES.errorType]: errorType }),
    };
    this.#modelDuration.record(seconds, attributes);
  }

  tokens(count: number, type: "input" | "output", provider: string, model: string): void {
    const attributes = {
      [ATTRIBUTES.operationName]: OPERATIONS.attempt,
      [ATTRIBUTES.providerName]: provider,
      [ATTRIBUTES.requestModel]: model,
      [ATTRIBUTES.tokenType]: type,
    };
    this.#tokenUsage.record(count, attributes);
  }

  turn(seconds: number, agentName: string, reason: string, errorType: string | undefined): void {
    const attributes = {
      [ATTRIBUTES.operationName]: OPERATIONS.turn,
      [ATTRIBUTES.agentName]: agentName,
      [ATTRIBUTES.turnReason]: reason,
      ...(errorType === undefined ? {} : { [ATTRIBUTES.errorType]: errorType }),
    };
    this.#turnDuration.record(seconds, attributes);
  }

  call(seconds: number, toolName: string, kind: string | undefined, outcome: string, errorType: string | undefined): void {
    const duration = {
      [ATTRIBUTES.operationName]: OPERATIONS.call,
      [ATTRIBUTES.toolName]: toolName,
      ...(errorType === undefined ? {} : { [ATTRIBUTES.errorType]: errorType }),
    };
    this.#toolDuration.record(seconds, duration);
    const counted = {
      [ATTRIBUTES.toolName]: toolName,
      [ATTRIBUTES.callOutcome]: outcome,
      ...(kind === undefined ? {} : { [ATTRIBUTES.toolKind]: kind }),
    };
    this.#toolCalls.add(1, counted);
  }

  denial(toolName: string, by: string): void {
    this.#denials.add(1, { [ATTRIBUTES.toolName]: toolName, [ATTRIBUTES.approvalBy]: by });
  }

  breach(limit: string, toolName: string | undefined): void {
    const attributes = {
      [ATTRIBUTES.limitName]: limit,
      ...(toolName === undefined ? {} : { [ATTRIBUTES.toolName]: toolName }),
    };
    this.#breaches.add(1, attributes);
  }

  providerUnavailable(provider: string): void {
    this.#unavailable.add(1, { [ATTRIBUTES.mcpProvider]: provider });
  }
}
