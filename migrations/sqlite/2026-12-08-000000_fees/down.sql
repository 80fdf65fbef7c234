-- Back to the shape before fees. A database that charged a fee is refused (the old ledger
-- cannot hold its entries): the CHECK below fails with "no_fees_recorded" and the revert
-- changes nothing.
CREATE TEMP TABLE fees_revert_guard (
    fees INTEGER NOT NULL CONSTRAINT no_fees_recorded CHECK (fees = 0)
);
INSERT INTO fees_revert_guard SELECT COUNT(*) FROM ledger WHERE kind IN ('fee', 'fee_income');
DROP TABLE fees_revert_guard;

CREATE TABLE ledger_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
    currency        TEXT NOT NULL CHECK (length(currency) = 3),
    kind            TEXT NOT NULL CHECK (kind IN ('deposit_approved', 'withdrawal_hold',
        'withdrawal_released', 'withdrawal_paid', 'manual_credit', 'manual_debit',
        'refund_hold', 'refund_released', 'refund_paid')),
    available_delta BIGINT NOT NULL,
    held_delta      BIGINT NOT NULL,
    operation_id    TEXT REFERENCES operations (id),
    created_at      BIGINT NOT NULL,
    refund_id       TEXT REFERENCES refunds (id),
    actor           TEXT,
    reason          TEXT,
    CHECK (available_delta <> 0 OR held_delta <> 0),
    CONSTRAINT ledger_refund_kind CHECK
        ((refund_id IS NOT NULL) = (kind IN ('refund_hold', 'refund_released', 'refund_paid')))
);
INSERT INTO ledger_new (id, merchant_id, currency, kind, available_delta, held_delta,
        operation_id, created_at, refund_id, actor, reason)
    SELECT id, merchant_id, currency, kind, available_delta, held_delta, operation_id,
        created_at, refund_id, actor, reason
    FROM ledger;
DROP TABLE ledger;
ALTER TABLE ledger_new RENAME TO ledger;
CREATE INDEX ledger_operation ON ledger (operation_id);

CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'the ledger is append-only');
END;

CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'the ledger is append-only');
END;

ALTER TABLE refunds DROP COLUMN fee_terms;
ALTER TABLE refunds DROP COLUMN fee;
ALTER TABLE operations DROP COLUMN fee_terms;
ALTER TABLE operations DROP COLUMN fee;
DROP TABLE tariffs;
