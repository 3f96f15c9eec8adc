// Internal: @openworker/registry/internal is for the OpenWorker packages themselves (the
// bundle resolver and the CLI read their files with it), with no compatibility promise
// between minor versions. The generic config-file reading every OpenWorker file shares.
export { CONFIG_FILE_MAX_BYTES, readConfigFile, type ConfigFileContents, type ConfigFileOptions } from "./config-file.js";
export { findDuplicateJsonKey, type DuplicateJsonKey } from "./duplicate-keys.js";
export { jsonSyntaxProblem } from "./json-syntax.js";
