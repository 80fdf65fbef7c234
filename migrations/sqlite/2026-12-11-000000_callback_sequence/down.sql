DROP TABLE merchant_callbacks;
ALTER TABLE callback_outbox DROP COLUMN sequence;
ALTER TABLE operations DROP COLUMN callback_sequence;
