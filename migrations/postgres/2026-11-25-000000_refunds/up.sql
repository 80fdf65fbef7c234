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
-- deposit).
ALTER TABLE ledger
    ADD COLUMN refund_id TEXT REFERENCES refunds (id),
    DROP CONSTRAINT ledger_kind_check,
    ADD CONSTRAINT ledger_kind_check CHECK (kind IN ('deposit_approved', 'withdrawal_hold',
        'withdrawal_released', 'withdrawal_paid', 'manual_credit', 'manual_debit',
        'refund_hold', 'refund_released', 'refund_paid')),
    ADD CONSTRAINT ledger_refund_kind CHECK
        ((refund_id IS NOT NULL) = (kind IN ('refund_hold', 'refund_released', 'refund_paid')));

-- The callback outbox, keyed by the operation and the refund: `id` is the operation's id for
-- its own callback and the refund's id for a refund's, which sits beside its deposit's
-- (`operation_id` is the deposit, `refund_id` the refund). Existing rows are operations'.
ALTER TABLE callback_attempts DROP CONSTRAINT callback_attempts_operation_id_fkey;
ALTER TABLE callback_outbox
    ADD COLUMN id TEXT,
    ADD COLUMN refund_id TEXT REFERENCES refunds (id);
UPDATE callback_outbox SET id = operation_id;
ALTER TABLE callback_outbox
    ALTER COLUMN id SET NOT NULL,
    DROP CONSTRAINT callback_outbox_pkey,
    ADD CONSTRAINT callback_outbox_pkey PRIMARY KEY (id),
    ADD CONSTRAINT callback_outbox_key CHECK (id = COALESCE(refund_id, operation_id));
-- An operation's callbacks: its own and its refunds'.
CREATE INDEX callback_outbox_operation ON callback_outbox (operation_id);

ALTER TABLE callback_attempts RENAME COLUMN operation_id TO callback_id;
ALTER TABLE callback_attempts
    ADD CONSTRAINT callback_attempts_callback_id_fkey
    FOREIGN KEY (callback_id) REFERENCES callback_outbox (id);
