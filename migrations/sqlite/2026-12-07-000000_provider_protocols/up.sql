-- A provider's kind names the protocol it speaks, and so the adapter that carries its calls:
-- any name of the provider pattern, not only `acquirer` (the Acquirer API). Which protocols
-- a binary speaks is its own business; `provider add --kind` refuses the others. SQLite
-- cannot change a CHECK in place: the table is rebuilt (nothing references it).
CREATE TABLE providers_new (
    name           TEXT PRIMARY KEY NOT NULL
        CHECK (length(name) BETWEEN 1 AND 32 AND name <> 'sandbox'),
    kind           TEXT NOT NULL
        CHECK (length(kind) BETWEEN 1 AND 32 AND kind NOT GLOB '*[^a-z0-9_-]*'
               AND substr(kind, 1, 1) BETWEEN 'a' AND 'z'),
    url            TEXT NOT NULL CHECK (length(url) >= 1),
    api_key        TEXT NOT NULL,
    webhook_secret TEXT NOT NULL,
    timeout_ms     BIGINT NOT NULL CHECK (timeout_ms BETWEEN 1000 AND 55000),
    allow_insecure SMALLINT NOT NULL DEFAULT 0 CHECK (allow_insecure IN (0, 1)),
    enabled        SMALLINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
INSERT INTO providers_new
    SELECT name, kind, url, api_key, webhook_secret, timeout_ms, allow_insecure, enabled,
           created_at, updated_at
    FROM providers;
DROP TABLE providers;
ALTER TABLE providers_new RENAME TO providers;
