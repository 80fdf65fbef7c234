ALTER TABLE merchants DROP COLUMN require_signature_v2;
