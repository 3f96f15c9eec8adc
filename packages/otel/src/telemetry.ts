import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import { OpenWorkerError, RUNTIME_ERROR_CODES, type Session } from "@openworker/runtime";
import { DEFAULT_MAX_CONTENT_LENGTH } from "./content.js";
import { RuntimeMetrics } from "./metrics.js";
import { SessionTracer } from "./session-tracer.js";

/** The instrumentation scope of every tracer and meter this package asks for. */
export const INSTRUMENTATION_SCOPE = "@openworker/otel";

/** How a {@link RuntimeTelemetry} is made. Without a provider, nothing is traced or measured. */
export interface TelemetryOptions {
  /** Where spans go (the host's SDK `TracerProvider`). Without one, no spans are made. */
  readonly tracerProvider?: TracerProvider;
  /** Where measurements go (the host's SDK `MeterProvider`). Without one, nothing is measured. */
  readonly meterProvider?: MeterProvider;
  /**
   * Put each call's arguments and a successful call's result on its span
   * (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`), as the journal keeps them:
   * redacted of every secret the runtime was handed (E6). Default `false`: tools see
   * users' data, and a trace backend is rarely where it may be kept.
   */
  readonly captureContent?: boolean;
  /** Characters of captured arguments or result kept per span; the rest is clipped. Default 8,192. */
  readonly maxContentLength?: number;
}

/** What {@link RuntimeTelemetry.instrument} reads from a session. */
export type InstrumentedSession = Pick<Session, "subscribe" | "bundle">;

/**
 * OpenTelemetry traces and metrics of a runtime's sessions: a span per turn
 * (`invoke_agent`), per model attempt (`chat`) and per governed tool call
 * (`execute_tool`), with the journal's ids as attributes, and metrics of durations,
 * outcomes, denials, limit breaches and unavailable providers. The host passes its own
 * providers; this package registers nothing globally and starts no exporter.
 *
 * @example
 * ```ts
 * const telemetry = new RuntimeTelemetry({ tracerProvider, meterProvider });
 * const session = await runtime.openSession({ bundle: "coworker" });
 * const stop = telemetry.instrument(session);
 * await session.runTurn("What is the battery status?");
 * stop();
 * ```
 */
export class RuntimeTelemetry {
  readonly #tracerProvider: TracerProvider | undefined;
  readonly #metrics: RuntimeMetrics | undefined;
  readonly #contentLength: number | undefined;

  constructor(options: TelemetryOptions = {}) {
    const maxContentLength = options.maxContentLength ?? DEFAULT_MAX_CONTENT_LENGTH;
    if (!Number.isSafeInteger(maxContentLength) || maxContentLength < 1) {
      throw new OpenWorkerError(
        RUNTIME_ERROR_CODES.OPTIONS_INVALID,
        `RuntimeTelemetry: maxContentLength must be a positive whole number of characters, got ${String(maxContentLength)}`,
      );
    }
    this.#tracerProvider = options.tracerProvider;
    this.#metrics = options.meterProvider && new RuntimeMetrics(options.meterProvider.getMeter(INSTRUMENTATION_SCOPE));
    this.#contentLength = options.captureContent === true ? maxContentLength : undefined;
  }

  /** Whether anything is traced or measured: false without a provider. */
  get enabled(): boolean {
    return this.#tracerProvider !== undefined || this.#metrics !== undefined;
  }

  /**
   * Follows a session's events until the returned function is called, which ends the
   * spans still open. Without a provider, the session is not
   * subscribed to: the runtime then builds no event object for it.
   */
  instrument(session: InstrumentedSession): () => void {
    if (!this.enabled) return () => undefined;
    const tracer = new SessionTracer({
      tracer: this.#tracerProvider?.getTracer(INSTRUMENTATION_SCOPE),
      metrics: this.#metrics,
      agentName: session.bundle.manifest.name,
      contentLength: this.#contentLength,
    });
    const unsubscribe = session.subscribe(tracer.listener);
    return () => {
      unsubscribe();
      tracer.endAll();
    };
  }
}
