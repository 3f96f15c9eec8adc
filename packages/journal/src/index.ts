// Anything exported here is public API of @openworker/journal.
export {};
