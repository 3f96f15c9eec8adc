// Anything exported here is public API of @openworker/journal-postgres/testing: a PostgreSQL server of a test's own.
export { startPostgres, type PostgresServer } from "./postgres-server.js";
