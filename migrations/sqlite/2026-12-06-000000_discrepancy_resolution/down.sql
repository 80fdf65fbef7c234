-- Back to discrepancies without a resolution: every recorded one counts as open again, and
-- who resolved which is forgotten (the audit log keeps it).
DROP INDEX provider_discrepancies_open;
ALTER TABLE provider_discrepancies DROP COLUMN resolution_entry;
ALTER TABLE provider_discrepancies DROP COLUMN resolution_note;
ALTER TABLE provider_discrepancies DROP COLUMN resolved_by;
ALTER TABLE provider_discrepancies DROP COLUMN resolved_at;
