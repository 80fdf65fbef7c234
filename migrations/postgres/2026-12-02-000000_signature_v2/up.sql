-- Signature version 2 (bound to the request's method and path) made mandatory for every
-- request of a merchant: `gateway merchant create|update --require-signature-v2`.
ALTER TABLE merchants
    ADD COLUMN require_signature_v2 SMALLINT NOT NULL DEFAULT 0
        CHECK (require_signature_v2 IN (0, 1));
