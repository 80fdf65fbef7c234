-- Refused once any fee was charged (the constraints restored below fail on its entries):
-- the old ledger cannot hold them.
ALTER TABLE ledger
    DROP CONSTRAINT ledger_refund_kind,
    ADD CONSTRAINT ledger_refund_kind
        CHECK ((refund_id IS NOT NULL) = starts_with(kind, 'refund_'));
ALTER DOMAIN ledger_kind DROP CONSTRAINT ledger_kind_check;
ALTER DOMAIN ledger_kind ADD CONSTRAINT ledger_kind_check
    CHECK (VALUE IN ('deposit_approved', 'withdrawal_hold', 'withdrawal_released',
        'withdrawal_paid', 'manual_credit', 'manual_debit', 'refund_hold', 'refund_released',
        'refund_paid'));
ALTER TABLE refunds DROP COLUMN fee, DROP COLUMN fee_terms;
ALTER TABLE operations DROP COLUMN fee, DROP COLUMN fee_terms;
DROP TABLE tariffs;
