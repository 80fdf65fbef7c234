-- Back to the shape before refunds. A database that recorded refunds is refused (the old
-- ledger cannot hold their entries, nor the old outbox their callbacks): the CHECK below
-- fails with "no_refunds_recorded" and the revert changes nothing.
CREATE TEMP TABLE refunds_revert_guard (
    refunds INTEGER NOT NULL CONSTRAINT no_refunds_recorded CHECK (refunds = 0)
);
INSERT INTO refunds_revert_guard SELECT COUNT(*) FROM refunds;
DROP TABLE refunds_revert_guard;

CREATE TABLE callback_outbox_new (
    operation_id    TEXT PRIMARY KEY NOT NULL REFERENCES operations (id),
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
    direction       TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
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
INSERT INTO callback_outbox_new (operation_id, merchant_id, direction, url, body, state,
        attempts, failures_in_run, next_attempt_at, lease_owner, lease_until, last_error,
        created_at, updated_at)
    SELECT operation_id, merchant_id, direction, url, body, state, attempts, failures_in_run,
        next_attempt_at, lease_owner, lease_until, last_error, created_at, updated_at
    FROM callback_outbox;

CREATE TABLE callback_attempts_new (
    operation_id TEXT NOT NULL REFERENCES callback_outbox_new (operation_id),
    attempt      INTEGER NOT NULL CHECK (attempt >= 1),
    at           BIGINT NOT NULL,
    duration_ms  BIGINT NOT NULL,
    http_status  INTEGER CHECK (http_status BETWEEN 100 AND 999),
    error        TEXT,
    PRIMARY KEY (operation_id, attempt)
);
INSERT INTO callback_attempts_new (operation_id, attempt, at, duration_ms, http_status, error)
    SELECT callback_id, attempt, at, duration_ms, http_status, error FROM callback_attempts;

DROP TABLE callback_attempts;
DROP TABLE callback_outbox;
ALTER TABLE callback_outbox_new RENAME TO callback_outbox;
ALTER TABLE callback_attempts_new RENAME TO callback_attempts;
CREATE INDEX callback_outbox_due ON callback_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX callback_outbox_leases ON callback_outbox (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX callback_outbox_created ON callback_outbox (created_at);

CREATE TABLE ledger_new (
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
INSERT INTO ledger_new (id, merchant_id, currency, kind, available_delta, held_delta,
        operation_id, created_at)
    SELECT id, merchant_id, currency, kind, available_delta, held_delta, operation_id,
        created_at
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

DROP TABLE refunds;
