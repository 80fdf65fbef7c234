-- Back to the schema before the console: its tables, the counters, the events and the
-- search indexes go; manual ledger entries lose who made them and why.
DROP INDEX callback_outbox_failed;
DROP INDEX operations_search_moid;
DROP INDEX operations_method_created;
DROP INDEX operations_provider_created;
DROP INDEX operations_status_created;
DROP INDEX operations_merchant_created;
DROP INDEX operations_created;
ALTER TABLE ledger
    DROP COLUMN reason,
    DROP COLUMN actor;
DROP TABLE ledger_checks;
DROP TABLE operation_counts;
DROP TABLE operation_events;
DROP TABLE audit_log;
DROP TABLE signin_failures;
DROP TABLE console_sessions;
DROP TABLE console_accounts;
