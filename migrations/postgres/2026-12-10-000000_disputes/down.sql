-- Back to no disputes. Refused while any dispute exists: its ledger entries and callbacks
-- cannot be kept without it, and deleting money entries would break the balances.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM disputes) THEN
        RAISE EXCEPTION 'disputes exist: this database cannot go back to a version without them';
    END IF;
END
$$;
DROP INDEX callback_outbox_dispute;
ALTER TABLE callback_outbox
    DROP CONSTRAINT callback_outbox_dispute,
    DROP CONSTRAINT callback_outbox_key,
    DROP COLUMN change_id,
    DROP COLUMN dispute_id,
    ADD CONSTRAINT callback_outbox_key CHECK (id = COALESCE(refund_id, operation_id));
ALTER TABLE ledger DROP CONSTRAINT ledger_one_movement, DROP CONSTRAINT ledger_dispute_kind;
ALTER TABLE ledger DROP COLUMN dispute_id;
ALTER DOMAIN ledger_kind DROP CONSTRAINT ledger_kind_check;
ALTER DOMAIN ledger_kind ADD CONSTRAINT ledger_kind_check
    CHECK (VALUE IN ('deposit_approved', 'withdrawal_hold', 'withdrawal_released',
        'withdrawal_paid', 'manual_credit', 'manual_debit', 'refund_hold', 'refund_released',
        'refund_paid', 'fee', 'fee_income'));
DROP TABLE dispute_files;
DROP TABLE disputes;

-- Only a chargeback's hold could take available below zero, and no dispute is left.
ALTER TABLE balances ADD CONSTRAINT balances_available_check CHECK (available >= 0);
