// Anything exported here is public API of @openworker/registry.
export type {
  McpProviderDefinition,
  ProviderPlacement,
  StdioProviderDefinition,
  StreamableHttpProviderDefinition,
} from "./provider.js";
