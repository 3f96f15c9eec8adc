// Anything exported here is public API of @openworker/cli.
export { CLI_ERROR_CODES, EXIT_CODES, HARNESS_ERROR_CODES } from "./cli/errors.js";
export { mainWithRegistry, runCli, type MainOptions } from "./main.js";
export { parseScript, readScriptFile, type ScriptFileStep } from "./setup/script.js";
export { parsePolicy, readPolicyFile } from "./setup/policy.js";
export {
  HarnessClient,
  type HarnessApprovalRequest,
  type HarnessCallReport,
  type HarnessClientOptions,
  type HarnessTurnResult,
} from "./stdio/harness-client.js";
export { HARNESS_METHODS } from "./stdio/harness-server.js";
export { JSON_RPC_ERRORS } from "./stdio/json-rpc.js";
// The sandbox launcher a host passes as `MainOptions.sandbox`, nameable without depending on the bridge.
export type { SandboxCommand, SandboxLaunch, SandboxLauncher } from "@openworker/mcp-bridge";
