-- Back to one clear secret per merchant direction. Refused, changing nothing, when a merchant
-- has rotated a secret (the old shape holds one per direction: the CHECK below fails with
-- "one_secret_per_direction") or a secret is encrypted (the old version cannot read it:
-- "no_encrypted_secrets").
CREATE TEMP TABLE secrets_revert_guard (
    rotated   INTEGER NOT NULL CONSTRAINT one_secret_per_direction CHECK (rotated = 0),
    encrypted INTEGER NOT NULL CONSTRAINT no_encrypted_secrets CHECK (encrypted = 0)
);
INSERT INTO secrets_revert_guard
    SELECT (SELECT COUNT(*) FROM merchant_keys WHERE version <> 1),
           (SELECT COUNT(*) FROM merchant_keys WHERE substr(secret, 1, 4) = 'enc:')
           + (SELECT COUNT(*) FROM providers
              WHERE substr(api_key, 1, 4) = 'enc:' OR substr(webhook_secret, 1, 4) = 'enc:');
DROP TABLE secrets_revert_guard;

-- SQLite adds a NOT NULL column only with a default; every row gets its secret right after.
ALTER TABLE merchants ADD COLUMN deposit_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE merchants ADD COLUMN withdrawal_secret TEXT NOT NULL DEFAULT '';
UPDATE merchants SET
    deposit_secret = (SELECT secret FROM merchant_keys k
                      WHERE k.merchant_id = merchants.id AND k.direction = 'deposit'),
    withdrawal_secret = (SELECT secret FROM merchant_keys k
                         WHERE k.merchant_id = merchants.id AND k.direction = 'withdrawal');
ALTER TABLE merchants DROP COLUMN require_timestamp;

ALTER TABLE operations DROP COLUMN fingerprint_key;
ALTER TABLE refunds DROP COLUMN fingerprint_key;
DROP TABLE gateway_settings;
DROP TABLE merchant_keys;
