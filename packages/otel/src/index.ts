// Anything exported here is public API of @openworker/otel.
export { DEFAULT_MAX_CONTENT_LENGTH } from "./content.js";
export { ATTRIBUTES, LIMITS, METRICS, OPERATIONS, SPAN_EVENTS } from "./names.js";
export { INSTRUMENTATION_SCOPE, RuntimeTelemetry, type InstrumentedSession, type TelemetryOptions } from "./telemetry.js";
