-- Held callbacks: a callback that comes due while its merchant is disabled waits in state
-- `held` (no attempt made or counted, its due time kept) and goes back to `pending` when the
-- merchant is enabled again. SQLite cannot change a CHECK in place, so the outbox is rebuilt
-- with the same rows, constraints and indexes, its state list widened; `callback_attempts`,
-- which refers to it, is rebuilt with it (as the refunds migration did), since a table that
-- other rows refer to cannot be dropped while foreign keys are enforced.
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
INSERT INTO callback_outbox_new (operation_id, merchant_id, direction, url, body, state,
        attempts, failures_in_run, next_attempt_at, lease_owner, lease_until, last_error,
        created_at, updated_at, id, refund_id)
    SELECT operation_id, merchant_id, direction, url, body, state, attempts, failures_in_run,
        next_attempt_at, lease_owner, lease_until, last_error, created_at, updated_at, id,
        refund_id
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
    SELECT callback_id, attempt, at, duration_ms, http_status, error FROM callback_attempts;

DROP TABLE callback_attempts;
DROP TABLE callback_outbox;
-- Renaming also points callback_attempts_new's reference at the renamed table.
ALTER TABLE callback_outbox_new RENAME TO callback_outbox;
ALTER TABLE callback_attempts_new RENAME TO callback_attempts;
-- The indexes the outbox has after the outbox migrations: the claim's, the listing's and
-- the failed ones' (console).
CREATE INDEX callback_outbox_due ON callback_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX callback_outbox_created ON callback_outbox (created_at);
CREATE INDEX callback_outbox_failed ON callback_outbox (created_at) WHERE state = 'failed';
-- Held callbacks by merchant: an enable releases its merchant's, and the worker's sweep
-- (held callbacks whose merchant is enabled) finds none in an empty index. Only held rows
-- are in it, so queuing, claiming and recording a callback never write to it.
CREATE INDEX callback_outbox_held ON callback_outbox (merchant_id) WHERE state = 'held';
