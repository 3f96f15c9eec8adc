// Internal: @openworker/tools-sdk/internal/validation is for the OpenWorker packages themselves
// (runtime, bridge, journal, testing kit), with no compatibility promise between minor versions.
// Node-only: the one place where input schemas are compiled (ajv) and fingerprinted,
// shared by the testing kit and the runtime so both validate identically.
export { schemaFingerprint, sha256Hex } from "./fingerprint.js";
export { SCHEMA_BOUNDS, type SchemaBound } from "./schema-bounds.js";
export { compileInputSchema, compiledSchemaCount, type ArgumentCheck, type ArgumentIssue, type ArgumentValidator, type CompileOptions } from "./compile.js";
