import { CODE_TOOL_ERROR } from "./code-tool.js";
import { DESCRIPTOR_FAILED, TOOL_INVALID } from "./descriptor-snapshot.js";

/**
 * Stable codes of the errors this package raises, for `OpenWorkerError.hasCode` (names,
 * descriptors and schemas are checked when a tool registers, so the registry passes
 * these on), and of the failed outcomes its execution reports. Execution faults
 * (`TOOL_TIMEOUT`, `TOOL_CRASHED`, …) are in `FAULT_CODES` (`@openworker/tools-sdk/internal/execution`).
 *
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error, SDK_ERROR_CODES.NAME_TOO_LONG)) shortenTheName();
 * ```
 */
export const SDK_ERROR_CODES = Object.freeze({
  /** A tool or namespace name is empty. */
  NAME_EMPTY: "NAME_EMPTY",
  /** A tool name has no dot: names are `namespace.tool` (N1). */
  NAME_NOT_QUALIFIED: "NAME_NOT_QUALIFIED",
  /** A name has a character outside ASCII letters, digits, `_`, `-` and `.` (N1). */
  NAME_INVALID_CHARACTER: "NAME_INVALID_CHARACTER",
  /** A name is over 80 bytes (N4). */
  NAME_TOO_LONG: "NAME_TOO_LONG",
  /** A name's model alias is over 80 bytes (N4). */
  ALIAS_TOO_LONG: "ALIAS_TOO_LONG",
  /** A namespace is not a valid name part. */
  NAMESPACE_INVALID: "NAMESPACE_INVALID",
  /** The namespace `openworker` is reserved (N3), and so is any whose aliases start with `openworker__` (N2). */
  NAMESPACE_RESERVED: "NAMESPACE_RESERVED",
  /** A descriptor field is missing or of the wrong type; the message names it. */
  DESCRIPTOR_INVALID: "DESCRIPTOR_INVALID",
  /** Something that is not a tool (no `descriptor()`/`call()` methods, or a descriptor with a key outside `DESCRIPTOR_KEYS`) was given to `runTool`, the registry or `readToolDescriptor`. */
  TOOL_INVALID,
  /** A tool's `descriptor()` threw or could not be read. */
  DESCRIPTOR_FAILED,
  /** An input schema is not an object schema, not valid JSON Schema, or of an unsupported dialect (B5). */
  SCHEMA_INVALID: "SCHEMA_INVALID",
  /** An input schema is beyond one of `SCHEMA_BOUNDS` (subschemas, nesting, enum values, patterns; `@openworker/tools-sdk/internal/validation`), so compiling it could hold up the host (B5). */
  SCHEMA_TOO_LARGE: "SCHEMA_TOO_LARGE",
  /** Arguments are not JSON, do not match the schema, or nest too deep (E5): a failed call, the model is told. */
  ARGUMENTS_INVALID: "ARGUMENTS_INVALID",
  /** Arguments are over 256 KB (E5). */
  ARGUMENTS_TOO_LARGE: "ARGUMENTS_TOO_LARGE",
  /** A result is not JSON (a cycle, a BigInt, a function): the call crashed (E4). */
  RESULT_NOT_JSON: "RESULT_NOT_JSON",
  /** A result has the wrong shape (an image without bytes, a field that cannot be read): the call crashed. */
  RESULT_INVALID: "RESULT_INVALID",
  /** `runTool` options are unusable (a timeout that is not a positive number, …). */
  OPTIONS_INVALID: "OPTIONS_INVALID",
  /** A `codeTool` handler answered `{ err }`: a `ToolError` with this code. */
  CODE_TOOL_ERROR,
});
