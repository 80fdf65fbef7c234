-- Discrepancies are resolvable: an operator marks one resolved (`gateway discrepancy resolve`,
-- the console), or a manual ledger entry that names its operation resolves it, with who did
-- it, when and why. Recorded ones stay open. Times are BIGINT milliseconds since the epoch.
-- The columns are NULL for every stored row, so nothing is rewritten.
ALTER TABLE provider_discrepancies
    ADD COLUMN resolved_at BIGINT,
    -- `operator:NAME` or `cli:OSUSER`.
    ADD COLUMN resolved_by TEXT,
    -- The operator's note, or the manual entry's reason.
    ADD COLUMN resolution_note TEXT,
    -- The manual ledger entry that resolved it, if one did.
    ADD COLUMN resolution_entry BIGINT,
    ADD CONSTRAINT provider_discrepancies_resolution
        CHECK ((resolved_at IS NULL) = (resolved_by IS NULL)
            AND (resolved_at IS NULL) = (resolution_note IS NULL)
            AND (resolution_entry IS NULL OR resolved_at IS NOT NULL));
-- The open ones: the overview counts them, a manual entry finds its operation's.
CREATE INDEX provider_discrepancies_open ON provider_discrepancies (operation_id)
    WHERE resolved_at IS NULL;
