CREATE INDEX callback_outbox_operation ON callback_outbox (operation_id);
ALTER TABLE callback_outbox SET (fillfactor = 70);
