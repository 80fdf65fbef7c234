-- Refunds (contract section 12): a refund is its own record beside the deposit it refunds,
-- with its own ledger entries and its own callback. Money is BIGINT minor units, times are
-- BIGINT milliseconds since the epoch, statuses SMALLINT 1 approved / 2 declined / 3
-- processing, as in `operations`.

CREATE TABLE refunds (
    id                 TEXT PRIMARY KEY NOT NULL,
    -- The refunded deposit.
    operation_id       TEXT NOT NULL REFERENCES operations (id),
    merchant_id        TEXT NOT NULL REFERENCES merchants (id),
    merchant_refund_id TEXT,
    -- Keyed hash of the deposit's id and the canonical request; NULL without a
    -- merchantRefundId.
    fingerprint        TEXT,
    amount             BIGINT NOT NULL CHECK (amount > 0),
    currency           TEXT NOT NULL CHECK (length(currency) = 3),
    status             SMALLINT NOT NULL CHECK (status IN (1, 2, 3)),
    error_code         TEXT,
    error_message      TEXT,
    callback_url       TEXT,
    -- Where it is carried out: `sandbox` or an acquirer's name (the deposit's provider).
    provider           TEXT NOT NULL CHECK (length(provider) >= 1),
    -- The acquirer's id of the refund, once it answered.
    acquirer_id        TEXT,
    -- While processing: when it is next looked at.
    check_at           BIGINT,
    -- Since when the acquirer's answer is unknown, while that lasts.
    unknown_since      BIGINT,
    -- The process settling or reading it, and until when.
    lease_owner        TEXT,
    lease_until        BIGINT,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    CHECK ((status = 2) = (error_code IS NOT NULL)),
    CHECK ((error_code IS NULL) = (error_message IS NULL)),
    CHECK ((merchant_refund_id IS NULL) = (fingerprint IS NULL)),
    CHECK (status = 3 OR check_at IS NULL),
    CHECK ((lease_owner IS NULL) = (lease_until IS NULL))
);
-- Idempotency: one refund per (merchant, merchantRefundId).
CREATE UNIQUE INDEX refunds_merchant_refund_id ON refunds (merchant_id, merchant_refund_id)
    WHERE merchant_refund_id IS NOT NULL;
-- A deposit's refunds, oldest first.
CREATE INDEX refunds_operation ON refunds (operation_id, created_at);
-- The settler's claim: processing refunds whose check time has come.
CREATE INDEX refunds_due ON refunds (check_at) WHERE status = 3;

-- The ledger: refund entries name their refund (and, as `operation_id`, the refunded
-- deposit). SQLite cannot change a CHECK in place, so the table is rebuilt with the same
-- ids (AUTOINCREMENT goes on from the highest) and its append-only triggers.
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
    CHECK (available_delta <> 0 OR held_delta <> 0),
    CONSTRAINT ledger_refund_kind CHECK
        ((refund_id IS NOT NULL) = (kind IN ('refund_hold', 'refund_released', 'refund_paid')))
);
INSERT INTO ledger_new (id, merchant_id, currency, kind, available_delta, held_delta,
        operation_id, created_at, refund_id)
    SELECT id, merchant_id, currency, kind, available_delta, held_delta, operation_id,
        created_at, NULL
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

-- The callback outbox, keyed by the operation and the refund: `id` is the operation's id for
-- its own callback and the refund's id for a refund's, which sits beside its deposit's
-- (`operation_id` is the deposit, `refund_id` the refund). Existing rows are operations'.
CREATE TABLE callback_outbox_new (
    operation_id    TEXT NOT NULL REFERENCES operations (id),
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
    id              TEXT PRIMARY KEY NOT NULL,
    refund_id       TEXT REFERENCES refunds (id),
    CHECK (state <> 'pending' OR next_attempt_at IS NOT NULL),
    CHECK ((lease_owner IS NULL) = (lease_until IS NULL)),
    CONSTRAINT callback_outbox_key CHECK (id = COALESCE(refund_id, operation_id))
);
INSERT INTO callback_outbox_new (operation_id, merchant_id, direction, url, body, state,
        attempts, failures_in_run, next_attempt_at, lease_owner, lease_until, last_error,
        created_at, updated_at, id, refund_id)
    SELECT operation_id, merchant_id, direction, url, body, state, attempts, failures_in_run,
        next_attempt_at, lease_owner, lease_until, last_error, created_at, updated_at,
        operation_id, NULL
    FROM callback_outbox;

CREATE TABLE callback_attempts_new (
    callback_id TEXT NOT NULL REFERENCES callback_outbox_new (id),
    attempt     INTEGER NOT NULL CHECK (attempt >= 1),
    at          BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    http_status INTEGER CHECK (http_status BETWEEN 100 AND 999),
    error       TEXT,
    PRIMARY KEY (callback_id, attempt)
);
INSERT INTO callback_attempts_new (callback_id, attempt, at, duration_ms, http_status, error)
    SELECT operation_id, attempt, at, duration_ms, http_status, error FROM callback_attempts;

DROP TABLE callback_attempts;
DROP TABLE callback_outbox;
-- Renaming also points callback_attempts_new's reference at the renamed table.
ALTER TABLE callback_outbox_new RENAME TO callback_outbox;
ALTER TABLE callback_attempts_new RENAME TO callback_attempts;
CREATE INDEX callback_outbox_due ON callback_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX callback_outbox_leases ON callback_outbox (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX callback_outbox_created ON callback_outbox (created_at);
-- An operation's callbacks: its own and its refunds'.
CREATE INDEX callback_outbox_operation ON callback_outbox (operation_id);
