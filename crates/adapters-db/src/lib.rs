//! Storage adapter: diesel on embedded SQLite and PostgreSQL, with the ledger, idempotency and the callback outbox.
