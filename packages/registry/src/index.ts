// Anything exported here is public API of @openworker/registry.
export {};
