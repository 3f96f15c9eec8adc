// Anything exported here is public API of @openworker/bundle-resolver.
export type { McpCatalogInput, McpCatalogTool, PublishedIcon } from "./catalog.js";
export { BUNDLE_ERROR_CODES } from "./codes.js";
export { BUNDLE_FILES, loadBundle, type Bundle } from "./load-bundle.js";
export { parseManifest, type Manifest, type Skill } from "./manifest.js";
export { checkSelection, providersNeeded, resolveSelection, type ResolvedSelection } from "./resolve.js";
export { providerFingerprint, type McpResolvedTool, type NativeResolvedTool, type PublishedMetadata, type ResolvedTool } from "./resolved-tool.js";
export { withoutProviders } from "./narrow.js";
export { parseToolsJson, type BundleSelection } from "./tools-json.js";
export { problemsOf } from "./problems.js";
