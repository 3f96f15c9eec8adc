// Anything exported here is public API of @openworker/harness-client.
export { HARNESS_ERROR_CODES, HARNESS_METHODS } from "./codes.js";
export {
  HarnessClient,
  type HarnessApprovalRequest,
  type HarnessCallReport,
  type HarnessClientOptions,
  type HarnessElicitationRequest,
  type HarnessTurnResult,
} from "./harness-client.js";
export { JSON_RPC_ERRORS } from "./json-rpc.js";
