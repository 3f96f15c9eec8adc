/**
 * Every error code `@openworker/registry` throws itself, besides the name codes of
 * `validateQualifiedName`/`validateNamespace` and `DESCRIPTOR_INVALID` from the SDK,
 * which it passes through unchanged. Codes are stable: hosts and `tools check` match on
 * them.
 *
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error, REGISTRY_ERROR_CODES.frozen)) console.log("register before opening the runtime");
 * ```
 */
export const REGISTRY_ERROR_CODES = Object.freeze({
  /** N8: a registration or `unregister` after `freeze()`. */
  frozen: "REGISTRY_FROZEN",
  /** `register` got something that is not a `Tool` (no `descriptor()`/`call()`). */
  toolInvalid: "TOOL_INVALID",
  /** `tool.descriptor()` threw, or reading one of its fields did (a throwing getter or Proxy trap); names the tool and field. */
  descriptorFailed: "DESCRIPTOR_FAILED",
  /** N6: two native tools with one qualified name. */
  duplicateTool: "DUPLICATE_TOOL",
  /** N6: two native tools whose derived model aliases are equal (`a.b__c` and `a.b.c`). */
  aliasCollision: "ALIAS_COLLISION",
  /** N5: a native tool in an MCP provider's namespace, or a provider on a native namespace. */
  namespaceConflict: "NAMESPACE_CONFLICT",
  /** N5: two MCP providers on one namespace. */
  duplicateProvider: "DUPLICATE_PROVIDER",
  /** A4: sandbox placement asked for a native tool. */
  nativeSandboxPlacement: "NATIVE_SANDBOX_PLACEMENT",
  /** A classification that is not a non-empty string. */
  classificationInvalid: "CLASSIFICATION_INVALID",
  /** A placement other than `"host"` or `"sandbox"`. */
  placementInvalid: "PLACEMENT_INVALID",
  /** N4: a provider namespace so long that no `namespace.tool` name could fit 80 bytes. */
  namespaceTooLong: "NAMESPACE_TOO_LONG",
  /** A provider definition with a missing or mistyped field. */
  providerInvalid: "PROVIDER_INVALID",
  /** A provider transport other than `stdio` or `streamable_http`. */
  transportUnknown: "PROVIDER_TRANSPORT_UNKNOWN",
  /** A streamable-HTTP URL that is not a local service and has no `allowRemote`. */
  urlNotLocal: "PROVIDER_URL_NOT_LOCAL",
  /** A servers file whose shape is wrong (the message names the entry and field). */
  serversFileInvalid: "SERVERS_FILE_INVALID",
  /** A servers file that is not JSON (the message gives the line and column, never the text). */
  serversFileJson: "SERVERS_FILE_INVALID_JSON",
  /** `loadServersFile`: no file at the path. */
  serversFileNotFound: "SERVERS_FILE_NOT_FOUND",
  /** `loadServersFile`: the path is a folder. */
  serversFileIsDirectory: "SERVERS_FILE_IS_DIRECTORY",
  /** `loadServersFile`: a FIFO, socket or device, whose reading could wait for ever. */
  serversFileNotAFile: "SERVERS_FILE_NOT_A_FILE",
  /** `loadServersFile`: over the 1 MiB a configuration file may have. */
  serversFileTooLarge: "SERVERS_FILE_TOO_LARGE",
  /** `loadServersFile`: not UTF-8 text. */
  serversFileNotUtf8: "SERVERS_FILE_NOT_UTF8",
  /** `loadServersFile`: the file exists but cannot be opened or read (permissions, I/O). */
  serversFileUnreadable: "SERVERS_FILE_UNREADABLE",
});
