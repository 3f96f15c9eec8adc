// Anything exported here is public API of @openworker/runtime.
export type { CallApproval, CallAudio, CallReport } from "./call/pipeline.js";
export type { PendingImage, ReleasedImage } from "./call/images.js";
export type { ElicitationAnswer, ElicitationRequest, ElicitationValue, Elicitor } from "./call/elicitation.js";
export { RUNTIME_ERROR_CODES } from "./errors.js";
export type { RuntimeEvent, RuntimeEventListener } from "./events.js";
export type {
  ModelCatalogRow,
  ModelImage,
  ModelMessage,
  ModelProvider,
  ModelReadiness,
  ModelRequest,
  ModelResponse,
  ModelToolCall,
  ModelToolDefinition,
  ModelUsage,
} from "./model/types.js";
export { MODEL_PROVIDER_CODES } from "./model/provider-codes.js";
export { LIVE_FACTS_HEADING, systemPrompt } from "./model/system-prompt.js";
export {
  checkApprovalPolicy,
  classify,
  DEFAULT_CLASSIFICATION,
  type ApprovalAnswer,
  type ApprovalPolicy,
  type ApprovalRequest,
  type Approver,
  type PolicyDecision,
} from "./policy.js";
export { isSessionId, Runtime, type ModelCatalogEntry, type RuntimeOptions, type SessionOptions } from "./runtime.js";
export { Session } from "./session/session.js";
export type { TurnResult, TurnStopReason } from "./turn/run-turn.js";

// Names a host meets in this package's signatures and options, from the packages it is
// built on: a host that depends on the runtime alone (pnpm's strict layout) can name them.
export { OpenWorkerError, type JsonObject, type JsonValue } from "@openworker/tools-sdk";
export type { McpBridgeOptions, McpToolInventory, SandboxCommand, SandboxLaunch, SandboxLauncher } from "@openworker/mcp-bridge";
export type { Bundle, ResolvedSelection, ResolvedTool } from "@openworker/bundle-resolver";
