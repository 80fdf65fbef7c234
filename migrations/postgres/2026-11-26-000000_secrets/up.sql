-- Secret rotation and encryption at rest: every signing secret of a merchant direction in a
-- versioned row of its own (rotation adds the next version and ends the older ones), the
-- version of the secret that keyed each stored fingerprint, a merchant's x-timestamp rule,
-- and the check value of the master key. Times are BIGINT milliseconds since the epoch,
-- booleans SMALLINT 0/1.

-- Every secret of a merchant direction, revoked ones included (kept to recognise replays).
-- `secret` is clear text, or `enc:v1:...` when written with GATEWAY_MASTER_KEY set.
CREATE TABLE merchant_keys (
    merchant_id TEXT NOT NULL REFERENCES merchants (id),
    direction   TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
    version     INTEGER NOT NULL CHECK (version >= 1),
    secret      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    -- When it stops authenticating requests; NULL: not before a rotation.
    expires_at  BIGINT,
    PRIMARY KEY (merchant_id, direction, version)
);

-- Each merchant's two secrets become version 1 of their directions; no copy stays in
-- `merchants`.
INSERT INTO merchant_keys (merchant_id, direction, version, secret, created_at)
    SELECT id, 'deposit', 1, deposit_secret, created_at FROM merchants
    UNION ALL
    SELECT id, 'withdrawal', 1, withdrawal_secret, created_at FROM merchants;
ALTER TABLE merchants
    DROP COLUMN deposit_secret,
    DROP COLUMN withdrawal_secret,
    -- Every request must carry x-timestamp.
    ADD COLUMN require_timestamp SMALLINT NOT NULL DEFAULT 0 CHECK (require_timestamp IN (0, 1));

-- The version of the merchant's secret that keyed the fingerprint; NULL without one. Every
-- fingerprint stored so far was keyed by the only secret there was.
ALTER TABLE operations ADD COLUMN fingerprint_key INTEGER CHECK (fingerprint_key >= 1);
UPDATE operations SET fingerprint_key = 1 WHERE fingerprint IS NOT NULL;
ALTER TABLE refunds ADD COLUMN fingerprint_key INTEGER CHECK (fingerprint_key >= 1);
UPDATE refunds SET fingerprint_key = 1 WHERE fingerprint IS NOT NULL;

-- The gateway's own settings: `master_key_check`, a fixed text encrypted with the master key
-- the first time the database is used with one, tells a wrong key at start;
-- `clear_copies_pending` marks a `gateway secrets encrypt` whose clean-up of the database
-- files has not finished.
CREATE TABLE gateway_settings (
    name  TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
