-- Providers over the network (contract sections 10 and 11): acquirers, the attempts made at
-- them and the discrepancies they report. Times are BIGINT milliseconds since the epoch,
-- booleans SMALLINT 0/1.

-- The provider of each operation's current attempt. Every operation stored before this
-- migration is the built-in sandbox's.
ALTER TABLE operations
    ADD COLUMN provider TEXT NOT NULL DEFAULT 'sandbox' CHECK (length(provider) >= 1);

-- The expiry sweep and the payout poller act on sandbox operations only: an acquirer's
-- operation is never expired on the gateway's clock nor polled through the sandbox.
DROP INDEX operations_expiry;
DROP INDEX operations_due;
CREATE INDEX operations_expiry ON operations (expires_at)
    WHERE status = 3 AND provider = 'sandbox';
CREATE INDEX operations_due ON operations (due_at)
    WHERE status = 3 AND provider = 'sandbox';
-- The metric of the oldest processing operation per provider and direction.
CREATE INDEX operations_processing ON operations (provider, direction, created_at)
    WHERE status = 3;

-- Acquirers reached over the network. The built-in sandbox is never stored here. The
-- credentials are stored as given (their encryption comes with secret rotation).
CREATE TABLE providers (
    name           TEXT PRIMARY KEY NOT NULL
        CHECK (length(name) BETWEEN 1 AND 32 AND name <> 'sandbox'),
    kind           TEXT NOT NULL CHECK (kind = 'acquirer'),
    url            TEXT NOT NULL CHECK (length(url) >= 1),
    api_key        TEXT NOT NULL,
    webhook_secret TEXT NOT NULL,
    -- One call's timeout: 1 s to 55 s.
    timeout_ms     BIGINT NOT NULL CHECK (timeout_ms BETWEEN 1000 AND 55000),
    allow_insecure SMALLINT NOT NULL DEFAULT 0 CHECK (allow_insecure IN (0, 1)),
    enabled        SMALLINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

-- Each call that starts an operation at a provider, committed before the call and completed
-- after it; the operation's current attempt is the last one tried.
CREATE TABLE provider_attempts (
    operation_id  TEXT NOT NULL REFERENCES operations (id),
    number        INTEGER NOT NULL CHECK (number >= 1),
    route_id      BIGINT NOT NULL REFERENCES routes (id),
    provider      TEXT NOT NULL CHECK (length(provider) >= 1),
    state         TEXT NOT NULL
        CHECK (state IN ('sent', 'ok', 'declined', 'unavailable', 'unknown', 'skipped')),
    -- The acquirer's payment id, once known.
    acquirer_id   TEXT,
    -- The provider's raw failure code, as reported.
    failure_code  TEXT,
    redirect_url  TEXT,
    latency_ms    BIGINT CHECK (latency_ms >= 0),
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    -- When the reconciler looks at it next; NULL: nothing left to do.
    next_check_at BIGINT,
    -- Since when its outcome is unknown (the acquirer has not been found to know it).
    unknown_since BIGINT,
    -- Reads since the current schedule started.
    reads         INTEGER NOT NULL DEFAULT 0 CHECK (reads >= 0),
    -- The reconciler process working on it, and until when.
    lease_owner   TEXT,
    lease_until   BIGINT,
    PRIMARY KEY (operation_id, number),
    CHECK ((lease_owner IS NULL) = (lease_until IS NULL))
);
-- The reconciler's claim: due attempts of one provider, oldest first.
CREATE INDEX provider_attempts_due ON provider_attempts (provider, next_check_at)
    WHERE next_check_at IS NOT NULL;

-- Final statuses reported by a provider that contradict the operation's own. Recorded and
-- counted; never corrected by the gateway.
CREATE TABLE provider_discrepancies (
    id           INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    operation_id TEXT NOT NULL REFERENCES operations (id),
    provider     TEXT NOT NULL,
    -- The status the provider reported, in its own words (e.g. `succeeded`).
    reported     TEXT NOT NULL,
    at           BIGINT NOT NULL
);
-- One row per operation, provider and reported status: a notification the acquirer sends
-- again is the same discrepancy.
CREATE UNIQUE INDEX provider_discrepancies_once
    ON provider_discrepancies (operation_id, provider, reported);

-- Upgrade rule (contract 10.3): first-version processes must fail at start against this
-- schema, since they would ignore `provider`. At start every gateway applies the embedded
-- migrations that diesel's table does not list; the first version embeds only the initial
-- one. Removing its row makes a first-version process try to create the initial tables
-- again, which fails ("table merchants already exists") and stops it before it serves.
-- Later versions take a database to contain every migration up to the newest one it lists
-- (and refuse one that lists a migration they do not embed).
DELETE FROM __diesel_schema_migrations WHERE version < '20261123000000';
