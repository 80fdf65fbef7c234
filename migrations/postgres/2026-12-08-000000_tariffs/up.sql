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
