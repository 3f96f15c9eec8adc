// Anything exported here is public API of @openworker/cli.
export {};
