DROP INDEX callback_outbox_failed_merchant;
DROP TABLE merchant_callbacks;
ALTER TABLE callback_outbox DROP COLUMN sequence;
ALTER TABLE operations DROP COLUMN callback_sequence;
