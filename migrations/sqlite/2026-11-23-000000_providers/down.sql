-- The first version's bookkeeping: its processes start again.
INSERT INTO __diesel_schema_migrations (version) VALUES ('20260101000000')
    ON CONFLICT DO NOTHING;
DROP TABLE provider_discrepancies;
DROP TABLE provider_attempts;
DROP TABLE providers;
DROP INDEX operations_processing;
DROP INDEX operations_expiry;
DROP INDEX operations_due;
CREATE INDEX operations_expiry ON operations (expires_at) WHERE status = 3;
CREATE INDEX operations_due ON operations (due_at) WHERE status = 3;
ALTER TABLE operations DROP COLUMN provider;
