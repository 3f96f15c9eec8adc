// Anything exported here is public API of @openworker/journal-postgres.
export { redactConnectionString } from "./connection.js";
export { JOURNAL_POSTGRES_ERRORS, type JournalPostgresErrorCode } from "./errors.js";
export { PostgresJournal, type PostgresJournalOptions, type PostgresRecovery } from "./postgres-journal.js";
export { POSTGRES_SCHEMA_VERSION } from "./schema.js";
