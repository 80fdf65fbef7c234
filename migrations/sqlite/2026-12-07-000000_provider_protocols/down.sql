-- Back to the Acquirer API alone; fails while a provider speaks another protocol.
CREATE TABLE providers_old (
    name           TEXT PRIMARY KEY NOT NULL
        CHECK (length(name) BETWEEN 1 AND 32 AND name <> 'sandbox'),
    kind           TEXT NOT NULL CHECK (kind = 'acquirer'),
    url            TEXT NOT NULL CHECK (length(url) >= 1),
    api_key        TEXT NOT NULL,
    webhook_secret TEXT NOT NULL,
    timeout_ms     BIGINT NOT NULL CHECK (timeout_ms BETWEEN 1000 AND 55000),
    allow_insecure SMALLINT NOT NULL DEFAULT 0 CHECK (allow_insecure IN (0, 1)),
    enabled        SMALLINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
INSERT INTO providers_old
    SELECT name, kind, url, api_key, webhook_secret, timeout_ms, allow_insecure, enabled,
           created_at, updated_at
    FROM providers;
DROP TABLE providers;
ALTER TABLE providers_old RENAME TO providers;
