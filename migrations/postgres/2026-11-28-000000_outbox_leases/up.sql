-- A claim of due callbacks sets only their leases (`lease_owner`, `lease_until`). With neither
-- column indexed and room left in each page, PostgreSQL writes that update in place (a HOT
-- update): no new entry in any of the outbox's indexes, and no dead one left in
-- `callback_outbox_due` for the next claim to step over. A process's leases, released at its
-- shutdown, are found among the pending rows (`callback_outbox_due`): only pending rows are
-- ever claimed.
DROP INDEX callback_outbox_leases;
ALTER TABLE callback_outbox SET (fillfactor = 70);
