/**
 * Every error code `@openworker/bundle-resolver` throws itself. Name problems inside a
 * bundle keep the SDK's codes (`NAME_INVALID_CHARACTER`, `NAMESPACE_RESERVED`,
 * `NAME_TOO_LONG`, …) and schema problems keep `SCHEMA_INVALID`; their messages are
 * prefixed with the file and field.
 *
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error, BUNDLE_ERROR_CODES.toolNotPublished)) showCatalog();
 * ```
 */
export const BUNDLE_ERROR_CODES = Object.freeze({
  /** The folder holds neither `manifest.md`/`tools.json` nor a `coworker/` folder. */
  bundleNotFound: "BUNDLE_NOT_FOUND",
  /** B6: `manifest.md` is missing. */
  manifestMissing: "MANIFEST_MISSING",
  /** B6: `tools.json` is missing. */
  toolsJsonMissing: "TOOLS_JSON_MISSING",
  /** A bundle file over 1 MiB. */
  fileTooLarge: "BUNDLE_FILE_TOO_LARGE",
  /** B6: a bundle file that is a directory. */
  fileIsDirectory: "BUNDLE_FILE_IS_DIRECTORY",
  /** A bundle file that is a FIFO, device or socket (reading one could wait for ever). */
  fileNotAFile: "BUNDLE_FILE_NOT_A_FILE",
  /** A bundle file that is not UTF-8. */
  fileNotUtf8: "BUNDLE_FILE_NOT_UTF8",
  /** A bundle file that exists but cannot be read. */
  fileUnreadable: "BUNDLE_FILE_UNREADABLE",
  /** B1/B6: `manifest.md` does not follow the format (front matter, instructions, skills). */
  manifestInvalid: "MANIFEST_INVALID",
  /** B1: two skills with one name. */
  skillDuplicate: "MANIFEST_SKILL_DUPLICATE",
  /** B6: `tools.json` is not JSON. */
  toolsJsonInvalidJson: "TOOLS_JSON_INVALID_JSON",
  /** B6: `tools.json` has a wrong type, a missing or unknown field. */
  toolsJsonInvalid: "TOOLS_JSON_INVALID",
  /** B3/B6: a `version` other than 1, 2 or 3. */
  versionUnknown: "TOOLS_JSON_VERSION_UNKNOWN",
  /** B6/N6: one name (or server) listed twice. */
  duplicateEntry: "TOOLS_JSON_DUPLICATE",
  /** N8: resolution needs a frozen registry. */
  registryNotFrozen: "REGISTRY_NOT_FROZEN",
  /** N7: no native tool and no MCP provider has the selected namespace. */
  namespaceUnknown: "NAMESPACE_UNKNOWN",
  /** N7/B4: the namespace is native, but no native tool has this exact name. */
  toolNotRegistered: "TOOL_NOT_REGISTERED",
  /** N7/B4: the MCP provider's catalog does not publish this exact remote name. */
  toolNotPublished: "TOOL_NOT_PUBLISHED",
  /** B3: a v1/v2 bundle names a namespace that belongs to native tools. */
  notMcpNamespace: "SELECTION_NOT_MCP",
  /** No catalog was given for an MCP provider the selection needs. */
  catalogMissing: "CATALOG_MISSING",
  /** A catalog listed twice, a tool published twice, or a malformed catalog entry. */
  catalogInvalid: "CATALOG_INVALID",
  /** N1: a v1 server publishes a tool whose name cannot be selected (e.g. contains "/"). */
  remoteNameInvalid: "MCP_TOOL_NAME_INVALID",
  /** N6: two selected names derive one model alias. */
  aliasCollision: "ALIAS_COLLISION",
  /** N6: one qualified name selected twice. */
  selectionDuplicate: "SELECTION_DUPLICATE",
});
