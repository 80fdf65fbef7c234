DROP INDEX callback_outbox_merchant;
ALTER TABLE callback_outbox DROP COLUMN sequence;
ALTER TABLE operations DROP COLUMN callback_sequence;
