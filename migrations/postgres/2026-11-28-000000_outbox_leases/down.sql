ALTER TABLE callback_attempts
    ADD CONSTRAINT callback_attempts_callback_id_fkey
    FOREIGN KEY (callback_id) REFERENCES callback_outbox (id);
ALTER TABLE callback_outbox RESET (fillfactor);
CREATE INDEX callback_outbox_leases ON callback_outbox (lease_owner) WHERE lease_owner IS NOT NULL;
