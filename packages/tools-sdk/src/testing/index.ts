// Anything exported here is public API of @openworker/tools-sdk/testing.
// The partner's testing kit (T7): run a tool the way the runtime will, without a runtime.
export { captureError, captureRejection } from "./capture-error.js";
export { createTestContext, type TestContext, type TestContextOptions } from "./context.js";
export { runTool, type RunToolOptions, type RunToolResult } from "./run-tool.js";
// The runtime's reading of a `modelContext` hook, for testing one.
export { gatherModelContext, type ModelContextFacts } from "../execution/model-context.js";
