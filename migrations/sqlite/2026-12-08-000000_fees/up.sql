-- A merchant's tariff per direction (deposit, withdrawal, refund), method and currency:
-- `percent_hundredths` hundredths of a percent (0 to 10000), the amounts in minor units of
-- the currency. No row, no fee.
CREATE TABLE tariffs (
    merchant_id        TEXT NOT NULL REFERENCES merchants (id),
    direction          TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal', 'refund')),
    method             TEXT NOT NULL
        CHECK (method IN ('card', 'sbp', 'sbp_qr', 'bank_a_pay', 'bank_b_pay', 'bank_c_pay')),
    currency           TEXT NOT NULL CHECK (length(currency) = 3 AND currency = upper(currency)),
    percent_hundredths INTEGER NOT NULL CHECK (percent_hundredths BETWEEN 0 AND 10000),
    fixed_fee          BIGINT NOT NULL CHECK (fixed_fee >= 0),
    min_fee            BIGINT CHECK (min_fee >= 0),
    max_fee            BIGINT CHECK (max_fee >= 0),
    updated_at         BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, direction, method, currency),
    CHECK (min_fee IS NULL OR max_fee IS NULL OR min_fee <= max_fee)
);

-- The fee an operation or a refund pays, fixed at creation in minor units, and the terms it
-- came from (`percent_hundredths;fixed;min;max`, min and max empty when absent; NULL: no
-- tariff applied). Existing rows paid none.
ALTER TABLE operations ADD COLUMN fee BIGINT NOT NULL DEFAULT 0 CHECK (fee >= 0);
ALTER TABLE operations ADD COLUMN fee_terms TEXT;
ALTER TABLE refunds ADD COLUMN fee BIGINT NOT NULL DEFAULT 0 CHECK (fee >= 0);
ALTER TABLE refunds ADD COLUMN fee_terms TEXT;

-- Ledger entries of fees: `fee`, what a merchant paid (out of a deposit's credit, or out of
-- a payout's or refund's hold), and `fee_income`, what the operator's fee account of the
-- currency earned (it names the merchant who paid; the merchant's balance does not move).
-- The fee account is the sum of its `fee_income` entries: no balance row, so no row that
-- every payment with a fee would lock. A refund's fee entries name
-- their refund as its other entries do. SQLite cannot change a CHECK in place: the table is
-- rebuilt with the same ids and its append-only triggers.
CREATE TABLE ledger_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
    currency        TEXT NOT NULL CHECK (length(currency) = 3),
    kind            TEXT NOT NULL CHECK (kind IN ('deposit_approved', 'withdrawal_hold',
        'withdrawal_released', 'withdrawal_paid', 'manual_credit', 'manual_debit',
        'refund_hold', 'refund_released', 'refund_paid', 'fee', 'fee_income')),
    available_delta BIGINT NOT NULL,
    held_delta      BIGINT NOT NULL,
    operation_id    TEXT REFERENCES operations (id),
    created_at      BIGINT NOT NULL,
    refund_id       TEXT REFERENCES refunds (id),
    actor           TEXT,
    reason          TEXT,
    CHECK (available_delta <> 0 OR held_delta <> 0),
    CONSTRAINT ledger_refund_kind CHECK (kind IN ('fee', 'fee_income')
        OR (refund_id IS NOT NULL) = (kind IN ('refund_hold', 'refund_released', 'refund_paid')))
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
