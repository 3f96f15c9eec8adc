// Anything exported here is public API of @openworker/registry.
export { REGISTRY_ERROR_CODES } from "./codes.js";
export {
  MAX_PROVIDER_BOUND_MS,
  type McpOAuthSettings,
  type McpProviderDefinition,
  type ProviderBounds,
  type ProviderPlacement,
  type ProviderSandboxPolicy,
  type StdioProviderDefinition,
  type StreamableHttpProviderDefinition,
} from "./provider.js";
export { urlForDisplay, type StdioProviderInput, type StreamableHttpProviderInput } from "./provider-definition.js";
export { ToolRegistry, type RegisteredTool, type RegisterOptions } from "./registry.js";
export { parseServersFile } from "./servers-file.js";
