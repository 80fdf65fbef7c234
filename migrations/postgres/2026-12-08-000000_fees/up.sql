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
ALTER TABLE operations
    ADD COLUMN fee BIGINT NOT NULL DEFAULT 0 CHECK (fee >= 0),
    ADD COLUMN fee_terms TEXT;
ALTER TABLE refunds
    ADD COLUMN fee BIGINT NOT NULL DEFAULT 0 CHECK (fee >= 0),
    ADD COLUMN fee_terms TEXT;

-- Ledger entries of fees: `fee`, what a merchant paid (out of a deposit's credit, or out of
-- a payout's or refund's hold), and `fee_income`, what the operator's fee account of the
-- currency earned (it names the merchant who paid; the merchant's balance does not move).
-- The fee account is the sum of its `fee_income` entries: no balance row, so no row that
-- every payment with a fee would lock. A refund's fee entries name
-- their refund as its other entries do.
ALTER DOMAIN ledger_kind DROP CONSTRAINT ledger_kind_check;
ALTER DOMAIN ledger_kind ADD CONSTRAINT ledger_kind_check
    CHECK (VALUE IN ('deposit_approved', 'withdrawal_hold', 'withdrawal_released',
        'withdrawal_paid', 'manual_credit', 'manual_debit', 'refund_hold', 'refund_released',
        'refund_paid', 'fee', 'fee_income'));
ALTER TABLE ledger
    DROP CONSTRAINT ledger_refund_kind,
    ADD CONSTRAINT ledger_refund_kind
        CHECK (kind IN ('fee', 'fee_income')
            OR (refund_id IS NOT NULL) = starts_with(kind, 'refund_'));
