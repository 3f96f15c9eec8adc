// Anything exported here is public API of @openworker/bundle-resolver.
export {};
