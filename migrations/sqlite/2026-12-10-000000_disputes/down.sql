-- Back to no disputes. Refused while any dispute exists (the insert below breaks its CHECK):
-- its ledger entries and callbacks cannot be kept without it, and deleting money entries
-- would break the balances.
CREATE TEMP TABLE no_disputes_left (disputes INTEGER NOT NULL CHECK (disputes = 0));
INSERT INTO no_disputes_left SELECT COUNT(*) FROM disputes;
DROP TABLE no_disputes_left;
-- Only a chargeback's hold could take available below zero, and no dispute is left.
CREATE TABLE balances_new (
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    currency    TEXT NOT NULL CHECK (length(currency) = 3),
    available   BIGINT NOT NULL CHECK (available >= 0),
    held        BIGINT NOT NULL CHECK (held >= 0),
    entry_at    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, currency)
);
INSERT INTO balances_new (merchant_id, currency, available, held, entry_at)
    SELECT merchant_id, currency, available, held, entry_at FROM balances;
DROP TABLE balances;
ALTER TABLE balances_new RENAME TO balances;
CREATE TABLE callback_outbox_new (
    operation_id    TEXT NOT NULL REFERENCES operations (id),
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
    direction       TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'held')),
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
INSERT INTO callback_outbox_new (operation_id, merchant_id, direction, url, body, state, attempts, failures_in_run, next_attempt_at, lease_owner, lease_until, last_error, created_at, updated_at, id, refund_id)
    SELECT operation_id, merchant_id, direction, url, body, state, attempts, failures_in_run, next_attempt_at, lease_owner, lease_until, last_error, created_at, updated_at, id, refund_id FROM callback_outbox;
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
    SELECT callback_id, attempt, at, duration_ms, http_status, error FROM callback_attempts;
DROP TABLE callback_attempts;
DROP TABLE callback_outbox;
-- Renaming also points callback_attempts_new's reference at the renamed table.
ALTER TABLE callback_outbox_new RENAME TO callback_outbox;
ALTER TABLE callback_attempts_new RENAME TO callback_attempts;
CREATE INDEX callback_outbox_due ON callback_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX callback_outbox_created ON callback_outbox (created_at);
CREATE INDEX callback_outbox_failed ON callback_outbox (created_at) WHERE state = 'failed';
CREATE INDEX callback_outbox_held ON callback_outbox (merchant_id) WHERE state = 'held';
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
    available_after BIGINT,
    held_after      BIGINT,
    CHECK (available_delta <> 0 OR held_delta <> 0),
    CONSTRAINT ledger_refund_kind CHECK (kind IN ('fee', 'fee_income')
        OR (refund_id IS NOT NULL) = (kind IN ('refund_hold', 'refund_released', 'refund_paid')))
);
INSERT INTO ledger_new (id, merchant_id, currency, kind, available_delta, held_delta, operation_id, created_at, refund_id, actor, reason, available_after, held_after)
    SELECT id, merchant_id, currency, kind, available_delta, held_delta, operation_id, created_at, refund_id, actor, reason, available_after, held_after
    FROM ledger;
DROP TABLE ledger;
ALTER TABLE ledger_new RENAME TO ledger;
CREATE INDEX ledger_operation ON ledger (operation_id);
CREATE INDEX ledger_merchant_time ON ledger (merchant_id, currency, created_at, id)
    WHERE kind <> 'fee_income';
CREATE INDEX ledger_fee_income ON ledger (currency, created_at) WHERE kind = 'fee_income';
CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'the ledger is append-only');
END;
CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'the ledger is append-only');
END;
CREATE TRIGGER ledger_records_balance BEFORE INSERT ON ledger
WHEN (NEW.kind = 'fee_income') <> (NEW.available_after IS NULL)
    OR (NEW.available_after IS NULL) <> (NEW.held_after IS NULL)
BEGIN
    SELECT RAISE(ABORT, 'a merchant ledger entry must record the balance it left');
END;
DROP TABLE dispute_files;
DROP TABLE disputes;
