// Anything exported here is public API of @openworker/cli.
export { CLI_ERROR_CODES, EXIT_CODES } from "./cli/errors.js";
export { mainWithRegistry, runCli, type MainOptions } from "./main.js";
export { parseScript, readScriptFile, type ScriptFileStep } from "./setup/script.js";
export { parsePolicy, readPolicyFile } from "./setup/policy.js";
// The sandbox launcher a host passes as `MainOptions.sandbox`, nameable without depending on the bridge.
export type { SandboxCommand, SandboxLaunch, SandboxLauncher } from "@openworker/mcp-bridge";
