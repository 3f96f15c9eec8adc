// Internal: @openworker/tools-sdk/internal/execution is for the OpenWorker packages themselves
// (runtime, bridge, journal, testing kit), with no compatibility promise between minor versions.
// The call boundary shared by the runtime and the testing kit: one implementation of
// the time bound, the progress bounds, result normalization and model-context caps.
export { onAbort, untilAborted, type AbortListenerRemover } from "./abort-listeners.js";
export {
  argumentsFailure,
  MAX_ARGUMENT_BYTES,
  MAX_ARGUMENT_DEPTH,
  readArgumentsText,
  readHostArguments,
  schemaMismatchMessage,
  type ArgumentsReading,
} from "./arguments.js";
export { executeTool, FAULT_CODES, type ExecuteOptions, type ExecutionResult } from "./execute.js";
export { gatherModelContext, type ModelContextFacts } from "./model-context.js";
export { boundErrorMessage, normalizeToolOutput, type Normalization } from "./normalize.js";
export type { AudioAttachment, CallError, CallOutcome, LimitBreach, LimitName, NormalizedOutput } from "./outcome.js";
export { createBoundedProgress, withProgressLimit, type BoundedProgress, type ProgressStats, type SettledFields } from "./progress.js";
