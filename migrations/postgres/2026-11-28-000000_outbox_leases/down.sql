ALTER TABLE callback_outbox RESET (fillfactor);
CREATE INDEX callback_outbox_leases ON callback_outbox (lease_owner) WHERE lease_owner IS NOT NULL;
