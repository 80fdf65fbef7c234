-- Back to discrepancies without a resolution: every recorded one counts as open again, and
-- who resolved which is forgotten (the audit log keeps it).
DROP INDEX provider_discrepancies_open;
ALTER TABLE provider_discrepancies
    DROP CONSTRAINT provider_discrepancies_resolution,
    DROP COLUMN resolution_entry,
    DROP COLUMN resolution_note,
    DROP COLUMN resolved_by,
    DROP COLUMN resolved_at;
