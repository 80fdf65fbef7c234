-- Disputes of deposits: an appeal (the merchant says "paid but not credited" or "wrong
-- amount", an operator decides) or a chargeback (the acquirer reverses an approved payin).
-- An appeal is open, then accepted or rejected; a chargeback is open (under_review once its
-- evidence reached the acquirer), then won or lost. Amounts in minor units, times in
-- milliseconds since the epoch.
CREATE TABLE disputes (
    id           TEXT PRIMARY KEY NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('appeal', 'chargeback')),
    operation_id TEXT NOT NULL REFERENCES operations (id),
    merchant_id  TEXT NOT NULL REFERENCES merchants (id),
    status       TEXT NOT NULL
        CHECK (status IN ('open', 'under_review', 'won', 'lost', 'accepted', 'rejected')),
    reason       TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 64),
    amount       BIGINT NOT NULL CHECK (amount > 0),
    currency     TEXT NOT NULL CHECK (length(currency) = 3),
    comment      TEXT,
    due_by       BIGINT,
    resolution   TEXT,
    -- A chargeback's provider and its id there.
    provider     TEXT,
    acquirer_id  TEXT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    -- A chargeback's evidence: stored, then forwarded once (`pending` until the call's answer
    -- or a read of the dispute says whether it arrived), `forwarded`, or `failed` (it never
    -- reached the acquirer: the merchant may send it again). The key is the forwarding call's
    -- Idempotency-Key; the text is the latest sent (the files are in dispute_files).
    evidence_state TEXT CHECK (evidence_state IN ('pending', 'forwarded', 'failed')),
    evidence_key   TEXT,
    evidence_text  TEXT,
    -- When the reconciler reads an undecided chargeback next, and who holds it meanwhile.
    check_at     BIGINT,
    lease_owner  TEXT,
    lease_until  BIGINT,
    CHECK ((lease_owner IS NULL) = (lease_until IS NULL)),
    CHECK (kind = 'chargeback' OR (evidence_state IS NULL AND check_at IS NULL)),
    CHECK (kind = 'chargeback' OR status IN ('open', 'accepted', 'rejected')),
    CHECK (kind = 'appeal' OR status IN ('open', 'under_review', 'won', 'lost')),
    CHECK ((provider IS NULL) = (acquirer_id IS NULL))
);
-- A deposit's disputes (its read shape), and the newest first (the console, the CLI).
CREATE INDEX disputes_operation ON disputes (operation_id, created_at);
CREATE INDEX disputes_created ON disputes (created_at, id);
-- One appeal open or accepted per deposit, even for two concurrent requests: an accepted
-- appeal corrected the deposit's money once and for all, so only a rejected one leaves room
-- for another.
CREATE UNIQUE INDEX disputes_one_appeal ON disputes (operation_id)
    WHERE kind = 'appeal' AND status IN ('open', 'accepted');
-- The chargebacks the reconciler reads next.
CREATE INDEX disputes_due ON disputes (check_at) WHERE check_at IS NOT NULL;
-- A chargeback is known by its provider's id.
CREATE UNIQUE INDEX disputes_acquirer ON disputes (provider, acquirer_id)
    WHERE acquirer_id IS NOT NULL;

-- The files sent with a dispute (an appeal's receipt), numbered in the order they came; at
-- most 2 MiB each, of a type their first bytes showed.
CREATE TABLE dispute_files (
    dispute_id   TEXT NOT NULL REFERENCES disputes (id),
    n            INTEGER NOT NULL CHECK (n >= 1),
    file_name    TEXT NOT NULL CHECK (length(file_name) BETWEEN 1 AND 255),
    content_type TEXT NOT NULL
        CHECK (content_type IN ('application/pdf', 'image/png', 'image/jpeg')),
    data         BLOB NOT NULL CHECK (length(data) BETWEEN 1 AND 2097152),
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (dispute_id, n)
);

-- A dispute's ledger entries name it (and the disputed deposit as their operation): an
-- accepted appeal's `appeal` entry and its fee, a chargeback's `dispute_hold`, then
-- `dispute_returned` (won) or `dispute_lost`. SQLite cannot change a CHECK in place: the
-- table is rebuilt with the same ids, indexes and triggers.
CREATE TABLE ledger_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    merchant_id     TEXT NOT NULL REFERENCES merchants (id),
    currency        TEXT NOT NULL CHECK (length(currency) = 3),
    kind            TEXT NOT NULL CHECK (kind IN ('deposit_approved', 'withdrawal_hold',
        'withdrawal_released', 'withdrawal_paid', 'manual_credit', 'manual_debit',
        'refund_hold', 'refund_released', 'refund_paid', 'fee', 'fee_income', 'appeal',
        'dispute_hold', 'dispute_returned', 'dispute_lost')),
    available_delta BIGINT NOT NULL,
    held_delta      BIGINT NOT NULL,
    operation_id    TEXT REFERENCES operations (id),
    created_at      BIGINT NOT NULL,
    refund_id       TEXT REFERENCES refunds (id),
    actor           TEXT,
    reason          TEXT,
    available_after BIGINT,
    held_after      BIGINT,
    dispute_id      TEXT REFERENCES disputes (id),
    CHECK (available_delta <> 0 OR held_delta <> 0),
    CONSTRAINT ledger_refund_kind CHECK (kind IN ('fee', 'fee_income')
        OR (refund_id IS NOT NULL) = (kind IN ('refund_hold', 'refund_released', 'refund_paid'))),
    CONSTRAINT ledger_dispute_kind CHECK (kind IN ('fee', 'fee_income')
        OR (dispute_id IS NOT NULL)
            = (kind IN ('appeal', 'dispute_hold', 'dispute_returned', 'dispute_lost'))),
    CONSTRAINT ledger_one_movement CHECK (refund_id IS NULL OR dispute_id IS NULL)
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

-- A dispute reports every change of its status: each change is its own callback, keyed by
-- the change's id, beside its deposit's and its refunds'. Rebuilt as the ledger is.
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
    dispute_id      TEXT REFERENCES disputes (id),
    change_id       TEXT,
    CHECK (state <> 'pending' OR next_attempt_at IS NOT NULL),
    CHECK ((lease_owner IS NULL) = (lease_until IS NULL)),
    CONSTRAINT callback_outbox_key CHECK (id = COALESCE(change_id, refund_id, operation_id)),
    CONSTRAINT callback_outbox_dispute CHECK ((dispute_id IS NULL) = (change_id IS NULL))
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
CREATE INDEX callback_outbox_dispute ON callback_outbox (dispute_id) WHERE dispute_id IS NOT NULL;

-- A chargeback's hold (`dispute_hold`) takes its amount from the available balance even when
-- that leaves it below zero: the bank has taken the money back. It is the only move that may
-- (the balance update of every other move still requires available + delta >= 0); payouts
-- and refunds are refused while available is negative. SQLite cannot drop a CHECK: the table
-- is rebuilt with the same columns and primary key, without `available >= 0`.
CREATE TABLE balances_new (
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    currency    TEXT NOT NULL CHECK (length(currency) = 3),
    available   BIGINT NOT NULL,
    held        BIGINT NOT NULL CHECK (held >= 0),
    entry_at    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, currency)
);
INSERT INTO balances_new (merchant_id, currency, available, held, entry_at)
    SELECT merchant_id, currency, available, held, entry_at FROM balances;
DROP TABLE balances;
ALTER TABLE balances_new RENAME TO balances;
