// Anything exported here is public API of @openworker/tools-sdk.
// This entry is the partner contract and imports nothing from `node:`: it stays
// importable anywhere. Node-only pieces live behind /testing and the internal/ subpaths.
export { canonicalJson } from "./canonical-json.js";
export { SDK_ERROR_CODES } from "./codes.js";
export { codeTool, CODE_TOOL_ERROR, type CodeToolHandler, type CodeToolResult } from "./code-tool.js";
export type { ProgressEvent, ProgressReporter, ToolContext } from "./context.js";
export { defineTool, type CheckedResult, type CheckedReturn, type NotJson, type ToolDefinition } from "./define-tool.js";
export { checkDescriptor, type ToolDescriptor } from "./descriptor.js";
export { DESCRIPTOR_FAILED, DESCRIPTOR_KEYS, readToolDescriptor, snapshotDescriptor, TOOL_INVALID, type DescriptorSnapshot } from "./descriptor-snapshot.js";
export { OpenWorkerError, type ErrorDetails } from "./errors.js";
export type { JsonObject, JsonPrimitive, JsonSchema, JsonValue } from "./json.js";
export { IMAGE_MIME_TYPES, LIMITS, utf8Bytes, type Limits } from "./limits.js";
export { modelAlias, parseQualifiedName, RESERVED_NAMESPACE, validateNamespace, validateQualifiedName, type QualifiedName } from "./names.js";
export { toolOutput, type ToolImage, type ToolOutput } from "./output.js";
export { finishTurn, type Tool, type ToolRegistrar } from "./tool.js";
export { ToolError, toolError } from "./tool-error.js";
