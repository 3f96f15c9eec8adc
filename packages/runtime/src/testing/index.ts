// Anything exported here is public API of @openworker/runtime/testing.
export {};
