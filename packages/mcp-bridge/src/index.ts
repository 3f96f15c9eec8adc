// Anything exported here is public API of @openworker/mcp-bridge.
export { McpBridge } from "./bridge.js";
export type { McpSession } from "./types.js";
export { MCP_ERROR_CODES } from "./codes.js";
export { isSecretName, MIN_SECRET_LENGTH, providerSecrets, redact, redactArgs, redactUrl, redactUrlCredentials } from "./redact.js";
export { safeBaseEnv, SAFE_ENV_NAMES, type McpBridgeOptions, type McpProviderLog, type McpProviderStartEvent } from "./options.js";
export type { SandboxCommand, SandboxLaunch, SandboxLauncher } from "./process/placement.js";
export type { McpAuthorizationOptions, McpAuthorizationRequest, McpStoredAuthorization, McpTokenKey, McpTokenStore } from "./connection/authorization.js";
export { resourceOf } from "./connection/authorization.js";
export { FileTokenStore } from "./connection/file-token-store.js";
export { assignSafeServerNames, type McpInventoryRequest, type McpInventoryServer, type McpInventoryTool, type McpToolInventory } from "./inventory.js";
export { toolFingerprint } from "./catalog/catalog.js";
export type { McpElicitationAnswer, McpElicitationOutcome, McpElicitationRequest, McpElicitationValue, McpElicitor } from "./call/elicitation.js";
export type {
  DiscoveryResult,
  McpCallOptions,
  McpCallResult,
  McpCatalog,
  McpCatalogTool,
  McpToolIcon,
  McpWithheldTool,
  ProviderDiagnostic,
  UnavailableProvider,
} from "./types.js";
