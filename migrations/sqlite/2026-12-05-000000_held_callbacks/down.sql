-- Back to the outbox without held callbacks. A database holding held callbacks is refused
-- (the earlier outbox cannot hold them): the CHECK below fails with "no_held_callbacks" and
-- the revert changes nothing. Enable their merchants (`gateway merchant enable ID`) first.
CREATE TEMP TABLE held_callbacks_revert_guard (
    held INTEGER NOT NULL CONSTRAINT no_held_callbacks CHECK (held = 0)
);
INSERT INTO held_callbacks_revert_guard
    SELECT COUNT(*) FROM callback_outbox WHERE state = 'held';
DROP TABLE held_callbacks_revert_guard;

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
ALTER TABLE callback_outbox_new RENAME TO callback_outbox;
ALTER TABLE callback_attempts_new RENAME TO callback_attempts;
CREATE INDEX callback_outbox_due ON callback_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX callback_outbox_created ON callback_outbox (created_at);
CREATE INDEX callback_outbox_failed ON callback_outbox (created_at) WHERE state = 'failed';
