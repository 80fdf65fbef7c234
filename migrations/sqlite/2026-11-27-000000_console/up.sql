-- The operator console: its accounts and sessions (rows, so every gateway process on the
-- database shares them), failed sign-ins, the audit log, each operation's events and the
-- overview's per-minute counters (both written in the same transaction as the change they
-- record), the ledger checks, who made a manual ledger entry and why, and the indexes of the
-- operations search. Times are BIGINT milliseconds since the epoch, booleans SMALLINT 0/1,
-- statuses SMALLINT 1 approved / 2 declined / 3 processing.

CREATE TABLE console_accounts (
    -- Lower case: `a-z 0-9 . _ @ -`, starting with a letter or digit.
    name          TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    role          TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    -- Argon2id in its PHC string form; never the password.
    password_hash TEXT NOT NULL,
    enabled       SMALLINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at    BIGINT NOT NULL
);

-- Signed-in sessions. `id` is the hex SHA-256 of the cookie's token (a copy of the database
-- signs no one in); the role is read from the account with the session.
CREATE TABLE console_sessions (
    id           TEXT PRIMARY KEY NOT NULL,
    operator     TEXT NOT NULL REFERENCES console_accounts (name),
    csrf         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE INDEX console_sessions_operator ON console_sessions (operator);

-- Failed sign-ins by name (known or not), counted over the last minute; rows older than a
-- day are deleted as new ones come.
CREATE TABLE signin_failures (
    id   INTEGER PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    at   BIGINT NOT NULL
);
CREATE INDEX signin_failures_name ON signin_failures (name, at);
-- Forgetting every name's failures older than a day.
CREATE INDEX signin_failures_at ON signin_failures (at);

-- Who changed what. `before_value` and `after_value` are JSON texts of the changed thing's
-- relevant fields, never a secret, a password or a hash.
CREATE TABLE audit_log (
    id           INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    actor        TEXT NOT NULL,
    action       TEXT NOT NULL,
    target       TEXT NOT NULL,
    before_value TEXT,
    after_value  TEXT,
    at           BIGINT NOT NULL
);

-- Each operation's timeline: what happened to it and to its refunds (whose events carry the
-- deposit's id and their own `refund_id`), written with the change. `detail` is the JSON of
-- the domain's `EventDetail`. No foreign key: every writer adds the event with its
-- operation, on the hot path.
CREATE TABLE operation_events (
    -- The rowid: events are never deleted, so each new one gets the next number.
    id           INTEGER PRIMARY KEY NOT NULL,
    operation_id TEXT NOT NULL,
    refund_id    TEXT,
    at           BIGINT NOT NULL,
    detail       TEXT NOT NULL
);
CREATE INDEX operation_events_operation ON operation_events (operation_id, id);

-- How many operations created in a minute (`created_at` div 60000, floored) now have a
-- direction, method, status and currency, and their amounts' sum: +1 at creation, -1 and +1
-- at a status change, in the same transaction. Each transaction adds to one `slot` (0-7,
-- chosen at random) so that concurrent ones rarely wait on one row; readers sum the slots.
-- A slot alone may go negative (a change counted in another slot than the creation).
CREATE TABLE operation_counts (
    minute    BIGINT NOT NULL,
    direction TEXT NOT NULL,
    method    TEXT NOT NULL,
    status    SMALLINT NOT NULL CHECK (status IN (1, 2, 3)),
    currency  TEXT NOT NULL,
    slot      SMALLINT NOT NULL CHECK (slot BETWEEN 0 AND 7),
    count     BIGINT NOT NULL,
    amount    BIGINT NOT NULL,
    PRIMARY KEY (minute, direction, method, status, currency, slot)
);
INSERT INTO operation_counts (minute, direction, method, status, currency, slot, count, amount)
    SELECT minute, direction, method, status, currency, 0, COUNT(*), CAST(SUM(amount) AS BIGINT)
    FROM (SELECT (created_at - ((created_at % 60000) + 60000) % 60000) / 60000 AS minute,
                 direction, method, status, currency, amount
          FROM operations) AS created
    GROUP BY minute, direction, method, status, currency;

-- Runs of the ledger check (the CLI's `ledger verify`, the console's "Verify now").
CREATE TABLE ledger_checks (
    id         INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    at         BIGINT NOT NULL,
    actor      TEXT NOT NULL,
    -- Balances that differed from their ledger; 0: it held.
    mismatches BIGINT NOT NULL CHECK (mismatches >= 0)
);
CREATE INDEX ledger_checks_at ON ledger_checks (at);

-- The overview's count of failed callbacks and the console's list of open ones (pending
-- ones have `callback_outbox_due`); few rows, so it costs the delivery path next to nothing.
CREATE INDEX callback_outbox_failed ON callback_outbox (created_at) WHERE state = 'failed';

-- Who made a manual entry (`operator:NAME`, `cli:OSUSER`) and why; NULL on every other entry
-- and on manual ones made before this migration.
ALTER TABLE ledger ADD COLUMN actor TEXT;
ALTER TABLE ledger ADD COLUMN reason TEXT;

-- The operations search: newest first (`created_at`, then `id`, both descending) under each
-- filter the console offers. `id` is the hyphenated lower-case UUID, so its text order is the
-- UUID's order. A direction alone is served by `operations_created`.
CREATE INDEX operations_created ON operations (created_at, id);
CREATE INDEX operations_merchant_created ON operations (merchant_id, created_at, id);
CREATE INDEX operations_status_created ON operations (status, created_at, id);
CREATE INDEX operations_provider_created ON operations (provider, created_at, id);
CREATE INDEX operations_method_created ON operations (direction, method, created_at, id);
-- The exact search by merchantOperationId across merchants (the idempotency index leads with
-- the merchant).
CREATE INDEX operations_search_moid ON operations (merchant_operation_id)
    WHERE merchant_operation_id IS NOT NULL;
