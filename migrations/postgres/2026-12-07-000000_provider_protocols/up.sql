-- A provider's kind names the protocol it speaks, and so the adapter that carries its calls:
-- any name of the provider pattern, not only `acquirer` (the Acquirer API). Which protocols
-- a binary speaks is its own business; `provider add --kind` refuses the others.
ALTER TABLE providers DROP CONSTRAINT providers_kind_check;
ALTER TABLE providers ADD CONSTRAINT providers_kind_check
    CHECK (kind ~ '^[a-z][a-z0-9_-]{0,31}$');
