-- Back to the shape before refunds. A database that recorded refunds is refused (the old
-- ledger cannot hold their entries, nor the old outbox their callbacks), changing nothing.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM refunds) THEN
        RAISE EXCEPTION 'refunds are recorded: the schema before refunds cannot hold them';
    END IF;
END
$$;

ALTER TABLE callback_attempts DROP CONSTRAINT callback_attempts_callback_id_fkey;
ALTER TABLE callback_attempts RENAME COLUMN callback_id TO operation_id;
DROP INDEX callback_outbox_operation;
ALTER TABLE callback_outbox
    DROP CONSTRAINT callback_outbox_key,
    DROP CONSTRAINT callback_outbox_pkey,
    DROP COLUMN refund_id,
    DROP COLUMN id,
    ADD CONSTRAINT callback_outbox_pkey PRIMARY KEY (operation_id);
ALTER TABLE callback_attempts
    ADD CONSTRAINT callback_attempts_operation_id_fkey
    FOREIGN KEY (operation_id) REFERENCES callback_outbox (operation_id);

ALTER TABLE ledger
    DROP CONSTRAINT ledger_refund_kind,
    DROP COLUMN refund_id,
    DROP CONSTRAINT ledger_kind_check,
    ADD CONSTRAINT ledger_kind_check CHECK (kind IN ('deposit_approved', 'withdrawal_hold',
        'withdrawal_released', 'withdrawal_paid', 'manual_credit', 'manual_debit'));

DROP TABLE refunds;
