-- The gateway's schema on SQLite. Money is BIGINT minor units, times are BIGINT
-- milliseconds since the epoch, statuses SMALLINT 1/2/3, names TEXT with CHECKs.

CREATE TABLE merchants (
    id                TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 64),
    name              TEXT NOT NULL UNIQUE CHECK (length(name) >= 1),
    deposit_secret    TEXT NOT NULL,
    withdrawal_secret TEXT NOT NULL,
    enabled           SMALLINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at        BIGINT NOT NULL
);

-- The (direction, method) pairs a merchant may use.
CREATE TABLE merchant_methods (
    merchant_id TEXT NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
    direction   TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
    method      TEXT NOT NULL
        CHECK (method IN ('card', 'sbp', 'sbp_qr', 'bank_a_pay', 'bank_b_pay', 'bank_c_pay')),
    PRIMARY KEY (merchant_id, direction, method),
    CHECK (direction = 'deposit' OR method IN ('card', 'sbp'))
);

CREATE TABLE routes (
    id            INTEGER PRIMARY KEY NOT NULL,
    direction     TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
    method        TEXT NOT NULL
        CHECK (method IN ('card', 'sbp', 'sbp_qr', 'bank_a_pay', 'bank_b_pay', 'bank_c_pay')),
    currency      TEXT NOT NULL CHECK (length(currency) = 3 AND currency = upper(currency)),
    min_amount    BIGINT NOT NULL CHECK (min_amount >= 1),
    max_amount    BIGINT NOT NULL,
    priority      INTEGER NOT NULL,
    provider      TEXT NOT NULL CHECK (length(provider) >= 1),
    flow          TEXT NOT NULL CHECK (flow IN
        ('redirect', 'qr', 'requisites', 'input_fields', 'instruction', 'confirmation', 'payout')),
    lifetime_secs BIGINT CHECK (lifetime_secs > 0),
    enabled       SMALLINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    CHECK (max_amount >= min_amount),
    CHECK (direction = 'deposit' OR method IN ('card', 'sbp'))
);

-- One sandbox route for every method and direction: 0.01 to 10,000,000.00 RUB.
INSERT INTO routes (direction, method, currency, min_amount, max_amount, priority, provider, flow) VALUES
    ('deposit', 'card', 'RUB', 1, 1000000000, 100, 'sandbox', 'redirect'),
    ('deposit', 'sbp', 'RUB', 1, 1000000000, 100, 'sandbox', 'redirect'),
    ('deposit', 'sbp_qr', 'RUB', 1, 1000000000, 100, 'sandbox', 'qr'),
    ('deposit', 'bank_a_pay', 'RUB', 1, 1000000000, 100, 'sandbox', 'redirect'),
    ('deposit', 'bank_b_pay', 'RUB', 1, 1000000000, 100, 'sandbox', 'redirect'),
    ('deposit', 'bank_c_pay', 'RUB', 1, 1000000000, 100, 'sandbox', 'redirect'),
    ('withdrawal', 'card', 'RUB', 1, 1000000000, 100, 'sandbox', 'payout'),
    ('withdrawal', 'sbp', 'RUB', 1, 1000000000, 100, 'sandbox', 'payout');

-- Operations. Requisites hold masked card numbers only; a CVC is never stored.
CREATE TABLE operations (
    id                    TEXT PRIMARY KEY NOT NULL,
    merchant_id           TEXT NOT NULL REFERENCES merchants (id),
    direction             TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
    method                TEXT NOT NULL
        CHECK (method IN ('card', 'sbp', 'sbp_qr', 'bank_a_pay', 'bank_b_pay', 'bank_c_pay')),
    status                SMALLINT NOT NULL CHECK (status IN (1, 2, 3)),
    amount                BIGINT NOT NULL CHECK (amount > 0),
    currency              TEXT NOT NULL CHECK (length(currency) = 3),
    user_id               TEXT NOT NULL,
    merchant_operation_id TEXT,
    callback_url          TEXT,
    success_url           TEXT,
    fail_url              TEXT,
    processing_url        TEXT,
    requisites            TEXT,
    user_data             TEXT,
    action                TEXT,
    error_code            TEXT,
    error_message         TEXT,
    route_id              BIGINT NOT NULL REFERENCES routes (id),
    expires_at            BIGINT,
    provider_state        TEXT,
    due_at                BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    -- Keyed hash of the canonical request; NULL when no merchantOperationId was given.
    fingerprint           TEXT,
    CHECK ((status = 2) = (error_code IS NOT NULL)),
    CHECK ((error_code IS NULL) = (error_message IS NULL)),
    CHECK ((merchant_operation_id IS NULL) = (fingerprint IS NULL))
);

-- Idempotency: one operation per (merchant, direction, merchantOperationId).
CREATE UNIQUE INDEX operations_merchant_operation_id
    ON operations (merchant_id, direction, merchant_operation_id)
    WHERE merchant_operation_id IS NOT NULL;
-- The expiry sweep and the payout poller look at processing operations only.
CREATE INDEX operations_expiry ON operations (expires_at) WHERE status = 3;
CREATE INDEX operations_due ON operations (due_at) WHERE status = 3;

CREATE TABLE balances (
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    currency    TEXT NOT NULL CHECK (length(currency) = 3),
    available   BIGINT NOT NULL CHECK (available >= 0),
    held        BIGINT NOT NULL CHECK (held >= 0),
    PRIMARY KEY (merchant_id, currency)
);

-- Append-only: every balance change is one row, written with the change.
CREATE TABLE ledger (
    id              INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
    currency        TEXT NOT NULL CHECK (length(currency) = 3),
    kind            TEXT NOT NULL CHECK (kind IN ('deposit_approved', 'withdrawal_hold',
        'withdrawal_released', 'withdrawal_paid', 'manual_credit', 'manual_debit')),
    available_delta BIGINT NOT NULL,
    held_delta      BIGINT NOT NULL,
    operation_id    TEXT REFERENCES operations (id),
    created_at      BIGINT NOT NULL,
    CHECK (available_delta <> 0 OR held_delta <> 0)
);
CREATE INDEX ledger_operation ON ledger (operation_id);

CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'the ledger is append-only');
END;

CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'the ledger is append-only');
END;

-- The callback outbox: one row per final operation with a callbackUrl.
CREATE TABLE callback_outbox (
    operation_id    TEXT PRIMARY KEY NOT NULL REFERENCES operations (id),
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
    direction       TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    -- Attempts ever made, operator retries included.
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- Failed attempts since the current schedule started.
    failures_in_run INTEGER NOT NULL DEFAULT 0 CHECK (failures_in_run >= 0),
    next_attempt_at BIGINT,
    lease_owner     TEXT,
    lease_until     BIGINT,
    last_error      TEXT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    CHECK (state <> 'pending' OR next_attempt_at IS NOT NULL),
    CHECK ((lease_owner IS NULL) = (lease_until IS NULL))
);
CREATE INDEX callback_outbox_due ON callback_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX callback_outbox_leases ON callback_outbox (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX callback_outbox_created ON callback_outbox (created_at);

CREATE TABLE callback_attempts (
    operation_id TEXT NOT NULL REFERENCES callback_outbox (operation_id),
    attempt      INTEGER NOT NULL CHECK (attempt >= 1),
    at           BIGINT NOT NULL,
    duration_ms  BIGINT NOT NULL,
    http_status  INTEGER CHECK (http_status BETWEEN 100 AND 999),
    error        TEXT,
    PRIMARY KEY (operation_id, attempt)
);
