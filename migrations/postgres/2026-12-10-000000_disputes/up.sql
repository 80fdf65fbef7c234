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
    data         BYTEA NOT NULL CHECK (length(data) BETWEEN 1 AND 2097152),
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (dispute_id, n)
);

-- A dispute's ledger entries name it (and the disputed deposit as their operation): an
-- accepted appeal's `appeal` entry and its fee, a chargeback's `dispute_hold`, then
-- `dispute_returned` (won) or `dispute_lost`.
ALTER TABLE ledger ADD COLUMN dispute_id TEXT REFERENCES disputes (id);
ALTER DOMAIN ledger_kind DROP CONSTRAINT ledger_kind_check;
ALTER DOMAIN ledger_kind ADD CONSTRAINT ledger_kind_check
    CHECK (VALUE IN ('deposit_approved', 'withdrawal_hold', 'withdrawal_released',
        'withdrawal_paid', 'manual_credit', 'manual_debit', 'refund_hold', 'refund_released',
        'refund_paid', 'fee', 'fee_income', 'appeal', 'dispute_hold', 'dispute_returned',
        'dispute_lost'));
ALTER TABLE ledger ADD CONSTRAINT ledger_dispute_kind
    CHECK (kind IN ('fee', 'fee_income')
        OR (dispute_id IS NOT NULL)
            = (kind IN ('appeal', 'dispute_hold', 'dispute_returned', 'dispute_lost')));
ALTER TABLE ledger ADD CONSTRAINT ledger_one_movement
    CHECK (refund_id IS NULL OR dispute_id IS NULL);

-- A dispute reports every change of its status: each change is its own callback, keyed by
-- the change's id, beside its deposit's and its refunds'.
ALTER TABLE callback_outbox
    ADD COLUMN dispute_id TEXT REFERENCES disputes (id),
    ADD COLUMN change_id TEXT,
    DROP CONSTRAINT callback_outbox_key,
    ADD CONSTRAINT callback_outbox_key CHECK (id = COALESCE(change_id, refund_id, operation_id)),
    ADD CONSTRAINT callback_outbox_dispute CHECK ((dispute_id IS NULL) = (change_id IS NULL));
CREATE INDEX callback_outbox_dispute ON callback_outbox (dispute_id) WHERE dispute_id IS NOT NULL;

-- A chargeback's hold (`dispute_hold`) takes its amount from the available balance even when
-- that leaves it below zero: the bank has taken the money back. It is the only move that may
-- (the balance update of every other move still requires available + delta >= 0); payouts
-- and refunds are refused while available is negative.
ALTER TABLE balances DROP CONSTRAINT balances_available_check;
