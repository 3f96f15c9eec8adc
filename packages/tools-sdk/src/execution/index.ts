// Anything exported here is public API of @openworker/tools-sdk/execution.
export {};
